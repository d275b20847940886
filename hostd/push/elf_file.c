// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One ELF file's headers, read with pread into fixed-size structures, every
 * offset and size checked against the file before use: System V gABI,
 * chapter 5 (program headers, the dynamic section).
 */
#include "elf_deps.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "xalloc.h"

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NATIVE_DATA ELFDATA2LSB
#else
#define NATIVE_DATA ELFDATA2MSB
#endif

/* Bytes to read from: a file descriptor or memory. */
struct src {
	int fd;
	const unsigned char *mem;
	uint64_t size;
};

static int src_read(const struct src *s, uint64_t off, void *buf, size_t len)
{
	size_t done = 0;

	if (off > s->size || len > s->size - off)
		return -ENOEXEC;
	if (s->mem) {
		memcpy(buf, s->mem + off, len);
		return 0;
	}
	while (done < len) {
		ssize_t n = pread(s->fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENOEXEC; /* shrank since fstat */
		done += (size_t)n;
	}
	return 0;
}

/* The fields both classes share, widened. */
struct phdr {
	uint32_t type;
	uint64_t offset, vaddr, filesz;
};

struct parse {
	const struct src *src;
	struct elf_file *f;
	struct phdr *ph;
	size_t nph;
};

static int read_ehdr(struct parse *p, uint64_t *phoff, uint16_t *phnum)
{
	unsigned char ident[EI_NIDENT];
	uint16_t phentsize;
	int r = src_read(p->src, 0, ident, sizeof(ident));

	if (r < 0)
		return r;
	if (memcmp(ident, ELFMAG, SELFMAG) != 0 || ident[EI_DATA] != NATIVE_DATA ||
	    ident[EI_VERSION] != EV_CURRENT)
		return -ENOEXEC;
	p->f->elf_class = ident[EI_CLASS];
	if (ident[EI_CLASS] == ELFCLASS64) {
		Elf64_Ehdr e;

		if ((r = src_read(p->src, 0, &e, sizeof(e))) < 0)
			return r;
		p->f->type = e.e_type;
		p->f->machine = e.e_machine;
		*phoff = e.e_phoff;
		*phnum = e.e_phnum;
		phentsize = e.e_phentsize;
		if (*phnum && phentsize != sizeof(Elf64_Phdr))
			return -ENOEXEC;
	} else if (ident[EI_CLASS] == ELFCLASS32) {
		Elf32_Ehdr e;

		if ((r = src_read(p->src, 0, &e, sizeof(e))) < 0)
			return r;
		p->f->type = e.e_type;
		p->f->machine = e.e_machine;
		*phoff = e.e_phoff;
		*phnum = e.e_phnum;
		phentsize = e.e_phentsize;
		if (*phnum && phentsize != sizeof(Elf32_Phdr))
			return -ENOEXEC;
	} else {
		return -ENOEXEC;
	}
	/* PN_XNUM (more in section 0) is beyond any program's needs */
	if (p->f->type != ET_EXEC && p->f->type != ET_DYN)
		return -ENOEXEC;
	return *phnum > ELF_DEPS_PHNUM_MAX ? -ENOEXEC : 0;
}

static int read_phdrs(struct parse *p, uint64_t phoff, uint16_t phnum)
{
	bool is64 = p->f->elf_class == ELFCLASS64;
	size_t each = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);

	p->ph = xcalloc(phnum ? phnum : 1, sizeof(*p->ph));
	for (uint16_t i = 0; i < phnum; i++) {
		uint64_t off = phoff + (uint64_t)i * each;
		int r;

		if (off < phoff)
			return -ENOEXEC;
		if (is64) {
			Elf64_Phdr h;

			if ((r = src_read(p->src, off, &h, sizeof(h))) < 0)
				return r;
			p->ph[i] = (struct phdr){ h.p_type, h.p_offset, h.p_vaddr, h.p_filesz };
		} else {
			Elf32_Phdr h;

			if ((r = src_read(p->src, off, &h, sizeof(h))) < 0)
				return r;
			p->ph[i] = (struct phdr){ h.p_type, h.p_offset, h.p_vaddr, h.p_filesz };
		}
		p->nph++;
	}
	return 0;
}

/* A NUL-terminated string of at most max bytes (NUL excluded) at off,
 * within limit bytes: -ENOEXEC when it does not end in time or is empty. */
static int read_str(const struct src *s, uint64_t off, uint64_t limit, size_t max, char **out)
{
	char buf[ELF_DEPS_STR_MAX + 1];
	size_t want = max + 1;
	int r;

	if (off >= s->size)
		return -ENOEXEC;
	if (want > limit)
		want = (size_t)limit;
	if (want > s->size - off)
		want = (size_t)(s->size - off);
	if ((r = src_read(s, off, buf, want)) < 0)
		return r;
	char *nul = memchr(buf, '\0', want);
	if (!nul || nul == buf)
		return -ENOEXEC;
	*out = xstrdup(buf);
	return 0;
}

static int read_interp(struct parse *p, const struct phdr *h)
{
	if (h->filesz < 2 || h->filesz > PATH_MAX)
		return -ENOEXEC;
	return read_str(p->src, h->offset, h->filesz, PATH_MAX - 1, &p->f->interp);
}

/* The file offset of an address, from the PT_LOAD that maps it; *room is
 * how many bytes of the segment follow it in the file. */
static int vaddr_to_off(const struct parse *p, uint64_t v, uint64_t *off, uint64_t *room)
{
	for (size_t i = 0; i < p->nph; i++) {
		const struct phdr *h = &p->ph[i];

		if (h->type != PT_LOAD || v < h->vaddr || v - h->vaddr >= h->filesz)
			continue;
		if (h->offset + (v - h->vaddr) < h->offset)
			return -ENOEXEC;
		*off = h->offset + (v - h->vaddr);
		*room = h->filesz - (v - h->vaddr);
		return 0;
	}
	return -ENOEXEC;
}

struct dyn_refs {
	uint64_t strtab, strsz;
	bool has_strtab, has_soname, has_runpath, has_rpath;
	uint64_t soname, runpath, rpath;
	uint64_t needed[ELF_DEPS_NEEDED_MAX];
	size_t nneeded;
};

static int read_dyn_entries(struct parse *p, const struct phdr *h, struct dyn_refs *d)
{
	bool is64 = p->f->elf_class == ELFCLASS64;
	size_t each = is64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
	uint64_t count = h->filesz / each;
	int r;

	if (count > ELF_DEPS_DYN_MAX)
		count = ELF_DEPS_DYN_MAX;
	for (uint64_t i = 0; i < count; i++) {
		int64_t tag;
		uint64_t val;

		if (is64) {
			Elf64_Dyn e;
			if ((r = src_read(p->src, h->offset + i * each, &e, sizeof(e))) < 0)
				return r;
			tag = e.d_tag;
			val = e.d_un.d_val;
		} else {
			Elf32_Dyn e;
			if ((r = src_read(p->src, h->offset + i * each, &e, sizeof(e))) < 0)
				return r;
			tag = e.d_tag;
			val = e.d_un.d_val;
		}
		switch (tag) {
		case DT_NULL: return 0;
		case DT_NEEDED:
			if (d->nneeded == ELF_DEPS_NEEDED_MAX)
				return -ENOEXEC;
			d->needed[d->nneeded++] = val;
			break;
		case DT_STRTAB:
			d->strtab = val;
			d->has_strtab = true;
			break;
		case DT_STRSZ: d->strsz = val; break;
		case DT_SONAME:
			d->soname = val;
			d->has_soname = true;
			break;
		case DT_RUNPATH:
			d->runpath = val;
			d->has_runpath = true;
			break;
		case DT_RPATH:
			d->rpath = val;
			d->has_rpath = true;
			break;
		}
	}
	return 0;
}

static int read_dynamic(struct parse *p, const struct phdr *h)
{
	struct dyn_refs *d = xcalloc(1, sizeof(*d));
	uint64_t off = 0, room = 0;
	int r = read_dyn_entries(p, h, d);

	p->f->dynamic = true;
	if (r < 0)
		goto out;
	if (!d->has_strtab) {
		/* names without a table to read them from */
		r = d->nneeded || d->has_soname || d->has_runpath || d->has_rpath ? -ENOEXEC : 0;
		goto out;
	}
	if ((r = vaddr_to_off(p, d->strtab, &off, &room)) < 0)
		goto out;
	if (d->strsz < room)
		room = d->strsz;
	p->f->needed = xcalloc(d->nneeded ? d->nneeded : 1, sizeof(char *));
	for (size_t i = 0; i < d->nneeded && r == 0; i++) {
		r = d->needed[i] < room ? read_str(p->src, off + d->needed[i], room - d->needed[i],
						   ELF_DEPS_STR_MAX, &p->f->needed[i])
					: -ENOEXEC;
		if (r == 0)
			p->f->nneeded++;
	}
#define DYN_STR(has, idx, dst)                                                    \
	if (r == 0 && d->has)                                                     \
		r = d->idx < room ? read_str(p->src, off + d->idx, room - d->idx, \
					     ELF_DEPS_STR_MAX, &p->f->dst)        \
				  : -ENOEXEC;
	DYN_STR(has_soname, soname, soname)
	DYN_STR(has_runpath, runpath, runpath)
	DYN_STR(has_rpath, rpath, rpath)
#undef DYN_STR
out:
	free(d);
	return r;
}

static int parse_src(const struct src *s, struct elf_file *f)
{
	struct parse p = { .src = s, .f = f };
	uint64_t phoff = 0;
	uint16_t phnum = 0;
	const struct phdr *interp = NULL, *dyn = NULL;
	int r;

	memset(f, 0, sizeof(*f));
	if (s->size > ELF_DEPS_FILE_MAX)
		return -EFBIG;
	r = read_ehdr(&p, &phoff, &phnum);
	if (r == 0)
		r = read_phdrs(&p, phoff, phnum);
	for (size_t i = 0; r == 0 && i < p.nph; i++) {
		if (p.ph[i].type == PT_INTERP && !interp)
			interp = &p.ph[i];
		else if (p.ph[i].type == PT_DYNAMIC && !dyn)
			dyn = &p.ph[i];
	}
	if (r == 0 && interp)
		r = read_interp(&p, interp);
	if (r == 0 && dyn)
		r = read_dynamic(&p, dyn);
	free(p.ph);
	if (r < 0)
		elf_file_fini(f);
	return r;
}

int elf_file_parse(const void *buf, size_t len, struct elf_file *out)
{
	struct src s = { .fd = -1, .mem = buf, .size = len };

	return parse_src(&s, out);
}

int elf_file_read(const char *path, struct elf_file *out)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	int r;

	memset(out, 0, sizeof(*out));
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (!S_ISREG(st.st_mode))
		r = S_ISDIR(st.st_mode) ? -EISDIR : -ENOEXEC; /* a FIFO would block */
	else {
		struct src s = { .fd = fd, .size = (uint64_t)st.st_size };
		r = parse_src(&s, out);
	}
	close(fd);
	return r;
}

void elf_file_fini(struct elf_file *f)
{
	for (size_t i = 0; i < f->nneeded; i++)
		free(f->needed[i]);
	free(f->needed);
	free(f->interp);
	free(f->soname);
	free(f->runpath);
	free(f->rpath);
	memset(f, 0, sizeof(*f));
}
