// SPDX-License-Identifier: GPL-2.0-or-later
#include "virt_accel.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "xalloc.h"

#define CPUINFO_MAX (16 << 20)

int virt_accel_parse(const char *s, enum virt_accel_mode *mode)
{
	static const char *const names[] = { "auto", "kvm", "tcg" };
	for (int i = 0; i < 3; i++) {
		if (strcmp(s, names[i]) == 0) {
			*mode = (enum virt_accel_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *virt_accel_mode_name(enum virt_accel_mode mode)
{
	switch (mode) {
	case VIRT_ACCEL_KVM: return "kvm";
	case VIRT_ACCEL_TCG: return "tcg";
	default: return "auto";
	}
}

/* 0 when /dev/kvm is usable, else -errno with what failed in why. */
static int kvm_usable(const char *path, char *why, size_t len)
{
	struct stat st;
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(why, len, "%s cannot be opened read-write (%s)", path, strerror(e));
		return -e;
	}
	if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode)) {
		int v = ioctl(fd, KVM_GET_API_VERSION, 0);
		if (v != KVM_API_VERSION) {
			snprintf(why, len, "%s answers KVM_GET_API_VERSION with %d, not %d", path,
				 v, KVM_API_VERSION);
			close(fd);
			return -ENODEV;
		}
	}
	close(fd);
	return 0;
}

static bool has_word(const char *line, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = strstr(line, word); p; p = strstr(p + 1, word)) {
		bool start = p == line || p[-1] == ' ' || p[-1] == '\t';
		bool end = p[n] == '\0' || p[n] == ' ' || p[n] == '\n' || p[n] == '\t';
		if (start && end)
			return true;
	}
	return false;
}

/* 1 when the first "flags" line of cpuinfo has vmx or svm, 0 when it has
 * neither, -errno when there is no such line or file. */
static int cpu_has_virt(const char *path, char *why, size_t len)
{
	char *text;
	size_t n;
	int r = fileio_read_all(path, CPUINFO_MAX, &text, &n);
	if (r < 0) {
		snprintf(why, len, "%s cannot be read (%s)", path, strerror(-r));
		return r;
	}
	r = -ENOENT;
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (strncmp(line, "flags", 5) == 0 && strchr(line, ':')) {
			const char *flags = strchr(line, ':') + 1;
			r = has_word(flags, "vmx") || has_word(flags, "svm");
			break;
		}
		line = nl ? nl + 1 : NULL;
	}
	free(text);
	if (r == -ENOENT)
		snprintf(why, len, "%s has no flags line", path);
	else if (r == 0)
		snprintf(why, len, "the CPU flags in %s have neither vmx nor svm", path);
	return r;
}

void virt_accel_decide(const char *root, enum virt_accel_mode mode, struct virt_accel *out)
{
	char *kvm_path, *cpuinfo_path, why[256] = "";
	bool kvm_opens, auto_kvm;

	if (!root)
		root = "";
	kvm_path = xasprintf("%s/dev/kvm", root);
	cpuinfo_path = xasprintf("%s/proc/cpuinfo", root);
	kvm_opens = kvm_usable(kvm_path, why, sizeof(why)) == 0;
	auto_kvm = kvm_opens && cpu_has_virt(cpuinfo_path, why, sizeof(why)) == 1;

	memset(out, 0, sizeof(*out));
	out->mode = mode;
	out->kvm = mode == VIRT_ACCEL_KVM || (mode == VIRT_ACCEL_AUTO && auto_kvm);
	out->name = out->kvm ? "kvm" : "tcg";
	out->domain_type = out->kvm ? "kvm" : "qemu";
	if (mode == VIRT_ACCEL_AUTO && auto_kvm)
		snprintf(out->reason, sizeof(out->reason),
			 "kvm: %s is usable and the CPU has vmx or svm", kvm_path);
	else if (mode == VIRT_ACCEL_AUTO && kvm_opens)
		snprintf(out->reason, sizeof(out->reason),
			 "tcg: %s opens, but %s: a guest kernel hangs at boot under KVM on such "
			 "a host (PVM, or nested without hardware virtualization)",
			 kvm_path, why);
	else if (mode == VIRT_ACCEL_AUTO)
		snprintf(out->reason, sizeof(out->reason), "tcg: %s", why);
	else if (out->kvm && !auto_kvm)
		snprintf(out->reason, sizeof(out->reason),
			 "kvm: forced by GUEST_ACCEL=kvm, although auto would pick tcg: %s", why);
	else if (!out->kvm && auto_kvm)
		snprintf(out->reason, sizeof(out->reason),
			 "tcg: forced by GUEST_ACCEL=tcg, although KVM is usable here");
	else
		snprintf(out->reason, sizeof(out->reason), "%s: forced by GUEST_ACCEL=%s",
			 out->name, out->name);
	free(kvm_path);
	free(cpuinfo_path);
}
