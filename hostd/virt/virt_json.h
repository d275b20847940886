/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the manifest records of libvirt guests: the accelerator decision,
 * the connection, and each guest.  New json-c objects; never logs.
 */
#ifndef LOCKSTEP_VIRT_JSON_H
#define LOCKSTEP_VIRT_JSON_H

#include <json-c/json.h>

#include "virt_accel.h"
#include "virt_conn.h"
#include "virt_guest.h"

/* {"requested": "auto", "chosen": "tcg", "domain_type": "qemu", "reason": "..."} */
struct json_object *virt_accel_json(const struct virt_accel *a);
/* {"uri": "qemu:///system", "keepalive": true, "lost": false} */
struct json_object *virt_conn_json(const struct virt_conn *c);
/* {"domain", "origin", "state", "uuid", "domain_type", "was_running",
 *  "started_by_us", "lost", "channel", "console_log", "address", "hostkey",
 *  "create_s", "boot_s", "failure", "stop_error"}; empty values left out */
struct json_object *virt_guest_json(const struct virt_guest *g);

#endif
