// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostd/push/bundle.c and bundle_settings.c: the files pushed for a list of
 * binaries, laid out on this host as they would be in a guest and run from
 * there (every library the process maps must come from the bundle); the
 * g.conf keys through experiment_load, errors naming binary and library.
 */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "bundle_settings.h"
#include "config.h"
#include "experiment.h"
#include "monitor_settings.h"
#include "testlib.h"

static char tmp[256];

static void setup(void)
{
	testlib_tmpdir(tmp, sizeof(tmp), "lockstep-bundle");
}

static void teardown(void)
{
	ck_assert_int_eq(testlib_rmtree(tmp), 0);
}

static const struct ssh_push_file *member(const struct bundle *b, const char *name)
{
	for (size_t i = 0; i < b->nfiles; i++)
		if (!strcmp(b->files[i].name_in_tar, name))
			return &b->files[i];
	return NULL;
}

/* Lays the bundle out under dir, as tar -x would in the guest. */
static void unpack(const struct bundle *b, const char *dir)
{
	for (size_t i = 0; i < b->nfiles; i++) {
		const struct ssh_push_file *f = &b->files[i];
		char cmd[3 * PATH_MAX];
		if (f->local_path)
			snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s/%s')\" && cp '%s' '%s/%s'",
				 dir, f->name_in_tar, f->local_path, dir, f->name_in_tar);
		else
			snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s/%s')\"", dir,
				 f->name_in_tar);
		ck_assert_int_eq(system(cmd), 0);
		char path[2 * PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", dir, f->name_in_tar);
		if (f->data) {
			FILE *o = fopen(path, "w");
			ck_assert_ptr_nonnull(o);
			ck_assert_uint_eq(fwrite(f->data, 1, f->len, o), f->len);
			fclose(o);
		}
		ck_assert_int_eq(chmod(path, f->mode), 0);
	}
}

static char *run(const char *cmd)
{
	static char out[1 << 16];
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	ck_assert_msg(pclose(p) == 0, "`%s` failed: %s", cmd, out);
	return out;
}

START_TEST(test_layout)
{
	const char *bins[] = { "cat", "/usr/bin/cat", "busybox" };
	struct bundle *b;
	char err[1024];
	ck_assert_int_eq(bundle_build(bins, 3, "/run/lockstep", NULL, NULL, &b, err, sizeof(err)), 0);
	/* cat twice (by name and by path) is one; busybox is static */
	ck_assert_uint_eq(b->nbinaries, access("/bin/busybox", X_OK) == 0 ? 2 : 1);
	const struct ssh_push_file *w = member(b, "bin/cat");
	ck_assert_ptr_nonnull(w);
	ck_assert_ptr_null(w->local_path);
	ck_assert_uint_eq(w->mode, 0755);
	ck_assert_ptr_nonnull(strstr(w->data, "exec '/run/lockstep/lib/ld-linux-x86-64.so.2' "
					      "--inhibit-cache --library-path '/run/lockstep/lib' "
					      "--argv0 'cat' '/run/lockstep/libexec/cat' \"$@\""));
	ck_assert_str_eq(member(b, "libexec/cat")->local_path, "/usr/bin/cat");
	/* the loader and libc by their sonames, the real files behind links */
	const struct ssh_push_file *ld = member(b, "lib/ld-linux-x86-64.so.2");
	ck_assert_ptr_nonnull(ld);
	ck_assert_uint_eq(ld->mode, 0755);
	struct stat st;
	ck_assert_int_eq(lstat(ld->local_path, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_ptr_nonnull(member(b, "lib/libc.so.6"));
	if (access("/bin/busybox", X_OK) == 0) {
		/* the file itself, from the PATH's /usr/bin or /bin */
		ck_assert_ptr_nonnull(strstr(member(b, "bin/busybox")->local_path, "bin/busybox"));
		ck_assert_ptr_null(member(b, "libexec/busybox"));
	}
	/* every name once */
	for (size_t i = 0; i < b->nfiles; i++)
		for (size_t k = i + 1; k < b->nfiles; k++)
			ck_assert_str_ne(b->files[i].name_in_tar, b->files[k].name_in_tar);
	bundle_free(b);
}
END_TEST

/* Run from the bundle, a process maps nothing from the host's library
 * folders: the pushed loader and libraries are all it uses. */
START_TEST(test_runs_from_bundle_only)
{
	char h[PATH_MAX + 8], cmd[4 * PATH_MAX];
	snprintf(h, sizeof(h), "%s/h", tmp);
	const char *bins[] = { "cat", "hackbench", "sysbench" };
	size_t n = access("/usr/bin/hackbench", X_OK) == 0 && access("/usr/bin/sysbench", X_OK) == 0
			   ? 3
			   : 1;
	struct bundle *b;
	char err[1024];
	ck_assert_msg(bundle_build(bins, n, h, NULL, NULL, &b, err, sizeof(err)) == 0, "%s", err);
	unpack(b, h);
	fprintf(stderr, "bundle of %zu binaries: %zu files, %.1f MiB\n", n, b->nfiles,
		(double)b->bytes / (1 << 20));
	bundle_free(b);

	snprintf(cmd, sizeof(cmd), "env -i PATH=%s/bin:/usr/bin:/bin %s/bin/cat /proc/self/maps", h, h);
	char *maps = run(cmd);
	size_t mapped = 0;
	for (char *save, *line = strtok_r(maps, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *path = strchr(line, '/');
		if (!path)
			continue;
		mapped++;
		ck_assert_msg(!strncmp(path, h, strlen(h)), "mapped from outside the bundle: %s", line);
	}
	ck_assert_uint_ge(mapped, 3);
	if (n == 3) {
		snprintf(cmd, sizeof(cmd), "cd %s && env -i PATH=%s/bin:/bin hackbench -g 1 -l 20",
			 tmp, h);
		ck_assert_ptr_nonnull(strstr(run(cmd), "Time:"));
		snprintf(cmd, sizeof(cmd),
			 "env -i PATH=%s/bin sysbench cpu --events=20 --time=0 run", h);
		ck_assert_ptr_nonnull(strstr(run(cmd), "events per second"));
	}
}
END_TEST

static void make_broken_program(const char *path)
{
	/* interp: the real loader; one DT_NEEDED that exists nowhere */
	unsigned char buf[1024] = { 0 };
	Elf64_Ehdr *e = (Elf64_Ehdr *)buf;
	Elf64_Phdr *ph = (Elf64_Phdr *)(buf + sizeof(*e));
	memcpy(e->e_ident, ELFMAG, SELFMAG);
	e->e_ident[EI_CLASS] = ELFCLASS64;
	e->e_ident[EI_DATA] = ELFDATA2LSB;
	e->e_ident[EI_VERSION] = EV_CURRENT;
	e->e_type = ET_EXEC;
	e->e_machine = EM_X86_64;
	e->e_phoff = sizeof(*e);
	e->e_phentsize = sizeof(*ph);
	e->e_phnum = 3;
	const char interp[] = "/lib64/ld-linux-x86-64.so.2";
	const char strs[] = "\0liblockstep-missing.so.7";
	ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_filesz = sizeof(buf) };
	ph[1] = (Elf64_Phdr){
		.p_type = PT_INTERP, .p_offset = 400, .p_vaddr = 400, .p_filesz = sizeof(interp)
	};
	ph[2] = (Elf64_Phdr){ .p_type = PT_DYNAMIC,
			      .p_offset = 512,
			      .p_vaddr = 512,
			      .p_filesz = 4 * sizeof(Elf64_Dyn) };
	memcpy(buf + 400, interp, sizeof(interp));
	memcpy(buf + 448, strs, sizeof(strs));
	Elf64_Dyn *d = (Elf64_Dyn *)(buf + 512);
	d[0] = (Elf64_Dyn){ .d_tag = DT_NEEDED, .d_un.d_val = 1 };
	d[1] = (Elf64_Dyn){ .d_tag = DT_STRTAB, .d_un.d_val = 448 };
	d[2] = (Elf64_Dyn){ .d_tag = DT_STRSZ, .d_un.d_val = sizeof(strs) };
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	close(fd);
}

START_TEST(test_errors_name_binary_and_library)
{
	struct bundle *b = NULL;
	char err[1024], prog[PATH_MAX + 16];
	const char *missing[] = { "lockstep-no-such-binary" };
	ck_assert_int_eq(bundle_build(missing, 1, "/h", "/usr/bin:/bin", NULL, &b, err, sizeof(err)),
			 -ENOENT);
	ck_assert_ptr_null(b);
	ck_assert_ptr_nonnull(strstr(err, "lockstep-no-such-binary: not found on this host"));

	snprintf(prog, sizeof(prog), "%s/prog", tmp);
	make_broken_program(prog);
	const char *broken[] = { prog };
	ck_assert_int_eq(bundle_build(broken, 1, "/h", NULL, NULL, &b, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "prog ("));
	ck_assert_ptr_nonnull(strstr(err, "needs the library liblockstep-missing.so.7"));

	/* by name through the PATH given */
	const char *by_name[] = { "prog" };
	ck_assert_int_eq(bundle_build(by_name, 1, "/h", tmp, NULL, &b, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, prog));

	const char *relative[] = { "bin/cat" };
	ck_assert_int_eq(bundle_build(relative, 1, "/h", NULL, NULL, &b, err, sizeof(err)), -EINVAL);
	const char *odd[] = { "ca t;" };
	ck_assert_int_eq(bundle_build(odd, 1, "/h", NULL, NULL, &b, err, sizeof(err)), -EINVAL);
	const char *script[] = { "/etc/passwd" };
	ck_assert_int_lt(bundle_build(script, 1, "/h", NULL, NULL, &b, err, sizeof(err)), 0);

	/* two different files called cat */
	char copy[PATH_MAX + 16], cmd[3 * PATH_MAX];
	snprintf(copy, sizeof(copy), "%s/cat", tmp);
	snprintf(cmd, sizeof(cmd), "cp /usr/bin/cat '%s'", copy);
	ck_assert_int_eq(system(cmd), 0);
	const char *twice[] = { "cat", copy };
	ck_assert_int_eq(bundle_build(twice, 2, "/h", NULL, NULL, &b, err, sizeof(err)), -EEXIST);
	ck_assert_ptr_nonnull(strstr(err, "libexec/cat"));
}
END_TEST

/* ---- the g.conf keys ---------------------------------------------------- */

static int load(const char *hconf, const char *gconf, struct experiment *x, struct config_diag *d)
{
	char h[PATH_MAX + 16], g[PATH_MAX + 16], tpl[PATH_MAX];
	const char *src = getenv("LOCKSTEP_SOURCE_ROOT");
	ck_assert_ptr_nonnull(src);
	snprintf(tpl, sizeof(tpl), "%s/vm-templates/demo-guest.xml.in", src);
	snprintf(h, sizeof(h), "%s/h.conf", tmp);
	snprintf(g, sizeof(g), "%s/g.conf", tmp);
	FILE *f = fopen(h, "w");
	fputs(hconf, f);
	fclose(f);
	f = fopen(g, "w");
	fputs(gconf, f);
	fclose(f);
	struct config *hc = NULL, *gc = NULL;
	int r = experiment_load(h, g, tpl, x, &hc, &gc, d);
	config_free(hc);
	config_free(gc);
	return r;
}

START_TEST(test_settings)
{
	struct experiment x;
	struct config_diag d;
	const char *libvirt = "GUEST_KIND=libvirt\nGUEST_COUNT=1\n";
	ck_assert_int_eq(load(libvirt,
			      "MMTESTS=cpu-probe\n"
			      "HARNESS_BINARIES=\"cat cat  /usr/bin/ls lockstep-not-here\"\n"
			      "GUEST_INSTALLED_BINARIES=lockstep-not-here\n",
			      &x, &d),
			 0);
	ck_assert_uint_eq(x.bundles.npush_binaries, 3);
	ck_assert_str_eq(x.bundles.push_binaries[2], "lockstep-not-here");
	ck_assert_uint_eq(x.bundles.nguest_binaries, 1);
	ck_assert_ptr_nonnull(x.bundles.bundle);
	ck_assert_uint_eq(x.bundles.bundle->nbinaries, 2);
	experiment_fini(&x);

	/* missing on this host: the key's line, the binary */
	ck_assert_int_eq(load(libvirt,
			      "MMTESTS=cpu-probe\n\nHARNESS_BINARIES='lockstep-not-here'\n", &x, &d),
			 -EINVAL);
	ck_assert_int_eq(d.line, 3);
	ck_assert_ptr_nonnull(strstr(d.file, "g.conf"));
	ck_assert_ptr_nonnull(strstr(d.text, "lockstep-not-here: not found on this host"));
	ck_assert_ptr_nonnull(strstr(d.text, "GUEST_INSTALLED_BINARIES"));

	/* local guests run on the host: nothing pushed, nothing resolved */
	ck_assert_int_eq(load("GUEST_KIND=local\n",
			      "MMTESTS=cpu-probe\n"
			      "HARNESS_BINARIES=lockstep-not-here\n",
			      &x, &d),
			 0);
	ck_assert_ptr_null(x.bundles.bundle);
	experiment_fini(&x);

	ck_assert_int_eq(load(libvirt,
			      "MMTESTS=cpu-probe\nGUEST_INSTALLED_BINARIES=/usr/bin/perf\n", &x, &d),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(d.text, "is a path"));
	ck_assert_int_eq(load(libvirt, "MMTESTS=cpu-probe\nHARNESS_BINARIES=../x\n", &x, &d), -EINVAL);
	ck_assert_int_eq(load(libvirt, "MMTESTS=cpu-probe\nHARNESS_BINARIES='a$b'\n", &x, &d), -EINVAL);
}
END_TEST

/* The guests' external monitors join a bundle list of their own, with no
 * experiment: trace-cmd stays on the host, an installed one is not pushed. */
START_TEST(test_monitor_push)
{
	struct monitor_settings mon = {
		.external = 1u << MONITOR_EXT_VMSTAT | 1u << MONITOR_EXT_TOP |
			    1u << MONITOR_EXT_TRACE_CMD,
	};
	char *installed[] = { "top" };
	struct bundle_list l = { .guest_binaries = installed, .nguest_binaries = 1 };
	struct config_diag d;
	/* a monitor missing on this host is logged and left to the guest */
	bool have_vmstat = system("command -v vmstat >/dev/null 2>&1") == 0;

	/* no harness folder (local guests): nothing to push */
	ck_assert_int_eq(monitor_settings_push(&mon, NULL, &l, NULL, NULL, &d), 0);
	ck_assert_uint_eq(l.npush_binaries, 0);
	ck_assert_ptr_null(l.bundle);

	ck_assert_int_eq(monitor_settings_push(&mon, "/run/lockstep", &l, NULL, NULL, &d), 0);
	if (have_vmstat) {
		ck_assert_uint_eq(l.npush_binaries, 1);
		ck_assert_str_eq(l.push_binaries[0], "vmstat");
		ck_assert_ptr_nonnull(l.bundle);
		ck_assert_uint_eq(l.bundle->nbinaries, 1);
		ck_assert_ptr_nonnull(member(l.bundle, "bin/vmstat"));
	} else {
		ck_assert_uint_eq(l.npush_binaries, 0);
		ck_assert_ptr_null(l.bundle);
	}
	/* again: nothing is listed twice */
	ck_assert_int_eq(monitor_settings_push(&mon, "/run/lockstep", &l, NULL, NULL, &d), 0);
	ck_assert_uint_eq(l.npush_binaries, have_vmstat ? 1 : 0);
	l.guest_binaries = NULL;
	l.nguest_binaries = 0;
	bundle_settings_fini(&l);
	ck_assert_ptr_null(l.push_binaries);
	ck_assert_ptr_null(l.bundle);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bundle");
	TCase *tc = tcase_create("bundle");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_layout);
	tcase_add_test(tc, test_runs_from_bundle_only);
	tcase_add_test(tc, test_errors_name_binary_and_library);
	tcase_add_test(tc, test_settings);
	tcase_add_test(tc, test_monitor_push);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
