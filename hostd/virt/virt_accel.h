/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which accelerator the guests get.  /dev/kvm existing is not enough: on a
 * PVM host (or nested without hardware virtualization) it opens, yet a
 * normal kernel hangs at boot under KVM.  `auto` picks KVM only when
 * /dev/kvm opens read-write AND the CPU flags in /proc/cpuinfo have vmx or
 * svm; anything else is TCG (libvirt domain type 'qemu').  The decision and
 * its reason go into the manifest.  Never logs.
 */
#ifndef LOCKSTEP_VIRT_ACCEL_H
#define LOCKSTEP_VIRT_ACCEL_H

#include <stdbool.h>

enum virt_accel_mode { VIRT_ACCEL_AUTO, VIRT_ACCEL_KVM, VIRT_ACCEL_TCG };

struct virt_accel {
	enum virt_accel_mode mode; /* what was asked for */
	bool kvm;		   /* the decision */
	const char *name;	   /* "kvm" or "tcg" */
	const char *domain_type;   /* libvirt's <domain type=...>: "kvm" or "qemu" */
	char reason[384];	   /* one sentence, for the manifest and the log */
};

/* "auto", "kvm" or "tcg" (GUEST_ACCEL); -EINVAL otherwise. */
int virt_accel_parse(const char *s, enum virt_accel_mode *mode);
const char *virt_accel_mode_name(enum virt_accel_mode mode);

/*
 * Decides.  root prefixes /dev/kvm and /proc/cpuinfo (NULL or "" for the
 * real ones; tests pass a folder with fake files).  A /dev/kvm that is a
 * character device must also answer KVM_GET_API_VERSION; a regular file
 * (a test's stand-in) only has to open.  A forced mode is obeyed, and the
 * reason says what auto would have picked when it differs.
 */
void virt_accel_decide(const char *root, enum virt_accel_mode mode, struct virt_accel *out);

#endif
