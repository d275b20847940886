#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A baseline host kernel against a patched one, on hostd --service:
#
#   1. submits the baseline run on the kernel running now, waits for it;
#   2. reboots once into the patched kernel (grub-reboot: the default entry
#      stays, so a patched kernel that does not boot falls back by itself);
#   3. after the boot, lockstep-resume.service runs this script again with
#      --resume: it checks the kernel, submits the patched run, waits, and
#      compares the two with hostctl compare.
#
# Usage (as root, as it reboots the host):
#   baseline-vs-patched.sh --patched-entry 'Advanced options for Debian GNU/Linux>Debian GNU/Linux, with Linux 6.9.0-sched+' \
#       --patched-kernel 6.9.0-sched+ --host-config h.conf --guest-config g.conf \
#       [--user alice] [--results /srv/lockstep/alice] [--name sched]
#
# Without lockstep-resume.service, run the same command line with --resume
# by hand after the reboot.  Copy and adapt: it is an example.
set -eu

STATE=/var/lib/lockstep/resume
HOSTCTL=${HOSTCTL:-hostctl}

die() { echo "baseline-vs-patched: $*" >&2; exit 1; }

as_user() {
	if [ -n "${SUBMIT_USER:-}" ] && [ "$SUBMIT_USER" != root ]; then
		runuser -u "$SUBMIT_USER" -- "$@"
	else
		"$@"
	fi
}

submit_and_wait() { # run-name
	id=$(as_user "$HOSTCTL" submit --host-config "$STATE/h.conf" --guest-config "$STATE/g.conf" \
		--run-name "$1" ${RESULTS:+--results "$RESULTS"})
	echo "baseline-vs-patched: experiment $id ($1) queued" >&2
	code=0
	as_user "$HOSTCTL" wait "$id" || code=$?
	[ "$code" -le 2 ] || die "cannot tell how experiment $id ended (hostctl wait: $code)"
	[ "$code" -ne 1 ] || die "experiment $id: configuration refused (hostctl logs $id)"
	[ "$code" -eq 0 ] || echo "baseline-vs-patched: experiment $id degraded or interrupted;" \
		"its partial results are kept (hostctl logs $id)" >&2
}

if [ "${1:-}" = --resume ]; then
	[ -f "$STATE/env" ] || die "nothing to resume: no $STATE/env"
	. "$STATE/env"
	systemctl disable lockstep-resume.service >/dev/null 2>&1 || true
	[ "$(uname -r)" = "$PATCHED_KERNEL" ] ||
		die "booted $(uname -r), not $PATCHED_KERNEL: the patched kernel did not come up (grub fell back); nothing more is run"
	submit_and_wait "$NAME-patched"
	dir=${RESULTS:-/var/lib/lockstep/results}
	code=0
	as_user "$HOSTCTL" compare --results "$dir" "$NAME-baseline" "$NAME-patched" || code=$?
	rm -rf "$STATE"
	exit "$code"
fi

ENTRY='' PATCHED_KERNEL='' HCONF='' GCONF='' SUBMIT_USER=${SUDO_USER:-root} RESULTS='' NAME=cmp
while [ $# -gt 0 ]; do
	case $1 in
	--patched-entry) ENTRY=$2; shift 2;;
	--patched-kernel) PATCHED_KERNEL=$2; shift 2;;
	--host-config) HCONF=$2; shift 2;;
	--guest-config) GCONF=$2; shift 2;;
	--user) SUBMIT_USER=$2; shift 2;;
	--results) RESULTS=$2; shift 2;;
	--name) NAME=$2; shift 2;;
	*) die "unknown option $1 (see the comment at the top)";;
	esac
done
[ -n "$ENTRY" ] && [ -n "$PATCHED_KERNEL" ] && [ -n "$HCONF" ] && [ -n "$GCONF" ] ||
	die "--patched-entry, --patched-kernel, --host-config and --guest-config are needed"
[ "$(id -u)" -eq 0 ] || die "run as root: it reboots the host"

mkdir -p "$STATE"
cp "$HCONF" "$STATE/h.conf"
cp "$GCONF" "$STATE/g.conf"
chmod 0644 "$STATE/h.conf" "$STATE/g.conf"
# shell-quoted, for the resumed run to source
{
	printf 'PATCHED_KERNEL=%s\n' "'$PATCHED_KERNEL'"
	printf 'SUBMIT_USER=%s\n' "'$SUBMIT_USER'"
	printf 'RESULTS=%s\n' "'$RESULTS'"
	printf 'NAME=%s\n' "'$NAME'"
} >"$STATE/env"

submit_and_wait "$NAME-baseline"
systemctl enable lockstep-resume.service >/dev/null
grub-reboot "$ENTRY"
echo "baseline-vs-patched: rebooting into $ENTRY; the patched run follows after the boot" >&2
systemctl reboot
