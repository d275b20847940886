/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Just enough XML for libvirt's domain documents, without libxml2: a
 * well-formedness-checking scanner that reports each element with its path
 * from the root ("domain/devices/channel/source"), and the few questions
 * hostd asks of a domain: where is the host side of a virtio-serial channel,
 * where does the serial console go, which hypervisor type.  Elements are
 * matched by their full path, so a <channel> inside <graphics> (SPICE) is
 * never taken for a virtio-serial one.  Pure code, never logs.
 */
#ifndef LOCKSTEP_VIRT_XML_H
#define LOCKSTEP_VIRT_XML_H

#include <stdbool.h>
#include <stddef.h>

#define VIRT_XML_MAX (16 << 20) /* bytes in a document */
#define VIRT_XML_DEPTH_MAX 32
#define VIRT_XML_PATH_MAX 512

struct virt_xml_elem {
	bool end;	  /* an end tag (or the end of an empty element <x/>) */
	const char *path; /* names from the root, '/'-separated */
	const char *name; /* the last component of path */
	unsigned depth;	  /* 1 for the root */
	/* start tags only: the attributes' text and where the tag lies */
	const char *attrs;
	size_t attrs_len;
	size_t tag_start, tag_end; /* offsets of '<' and just past '>' */
};

/* Calls cb for every start and end of an element, in document order; cb
 * returns 0 to go on, anything else stops the scan and is returned.
 * -EINVAL when the text is not well-formed (mismatched tags, bad attribute
 * syntax, too deep, too long). */
int virt_xml_scan(const char *xml, int (*cb)(const struct virt_xml_elem *e, void *data), void *data);

/* The decoded value of attribute name of a start tag: 0 with *value (a new
 * string), 1 when absent, -EINVAL on a bad entity. */
int virt_xml_attr(const struct virt_xml_elem *e, const char *name, char **value);

/*
 * The host-side path of the virtio-serial channel whose <target name=...>
 * is target_name (domain/devices/channel with type='unix').  0 with *path;
 * -ENOENT when there is no such channel; -EPROTO when it is not a unix
 * channel or has no <source path>; -EINVAL for XML that is not well-formed.
 */
int virt_xml_channel_path(const char *xml, const char *target_name, char **path);

/* The file the first serial port writes to (domain/devices/serial with
 * type='file', its <source path>, else its <log file>).  *append (may be
 * NULL) says whether qemu appends to it (append='on') rather than
 * truncating it when the domain starts.  0, -ENOENT (no serial to a file),
 * -EINVAL. */
int virt_xml_console_file(const char *xml, char **path, bool *append);

/* The root's type attribute (kvm, qemu, ...).  0, -ENOENT, -EINVAL. */
int virt_xml_domain_type(const char *xml, char **type);

/*
 * A copy of a domain document with the root's type attribute set to type
 * (when not NULL) and block (when not NULL: a cputune element) added as the
 * root's last child.  -EEXIST when the document already has an element named
 * like block's root; -EINVAL when it is not a well-formed <domain>.
 */
int virt_xml_edit_domain(const char *xml, const char *type, const char *block, char **out);

#endif
