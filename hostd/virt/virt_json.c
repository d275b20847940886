// SPDX-License-Identifier: GPL-2.0-or-later
#include "virt_json.h"

static void add_str(struct json_object *o, const char *key, const char *v)
{
	if (v && *v)
		json_object_object_add(o, key, json_object_new_string(v));
}

static void add_bool(struct json_object *o, const char *key, bool v)
{
	json_object_object_add(o, key, json_object_new_boolean(v));
}

struct json_object *virt_accel_json(const struct virt_accel *a)
{
	struct json_object *o = json_object_new_object();
	add_str(o, "requested", virt_accel_mode_name(a->mode));
	add_str(o, "chosen", a->name);
	add_str(o, "domain_type", a->domain_type);
	add_str(o, "reason", a->reason);
	return o;
}

struct json_object *virt_conn_json(const struct virt_conn *c)
{
	struct json_object *o = json_object_new_object();
	add_str(o, "uri", virt_conn_uri(c));
	add_bool(o, "keepalive", virt_conn_keepalive(c));
	add_bool(o, "lost", virt_conn_lost(c));
	return o;
}

struct json_object *virt_guest_json(const struct virt_guest *g)
{
	struct json_object *o = json_object_new_object();
	char addr[VIRT_ADDR_HOST_MAX + 16] = "";

	add_str(o, "domain", g->name);
	add_str(o, "origin", g->settings->origin == VIRT_ORIGIN_TEMPLATE ? "template" : "existing");
	add_str(o, "state", virt_guest_state_name(g->state));
	add_str(o, "uuid", g->uuid);
	add_str(o, "domain_type", g->domain_type);
	add_bool(o, "was_running", g->was_running);
	add_bool(o, "started_by_us", g->started_by_us);
	add_bool(o, "lost", g->lost);
	add_str(o, "channel", g->channel_path);
	add_str(o, "console_log", g->console_log);
	if (g->addr.port)
		virt_addr_format(&g->addr, addr, sizeof(addr));
	add_str(o, "address", addr);
	if (g->addr.port)
		add_str(o, "addr_source", g->addr.source);
	add_str(o, "hostkey", g->hostkey);
	if (g->create_s > 0)
		json_object_object_add(o, "create_s", json_object_new_double(g->create_s));
	if (g->ready_ns)
		json_object_object_add(o, "boot_s", json_object_new_double(g->boot_s));
	add_str(o, "failure", g->failure);
	if (g->state == VIRT_GUEST_STOPPED)
		add_str(o, "stop_error", g->error);
	return o;
}
