#!/bin/bash
# The Debian package under a real systemd (meson test --suite systemd).
#
# Builds the package (dpkg-buildpackage, cached by the source's content),
# boots a Debian 12 root with systemd as PID 1 in systemd-nspawn (the root
# made by debootstrap from this machine's configured apt source, cached as
# a tarball in the build folder), installs the .deb there with apt, and
# checks through systemctl, journalctl and hostctl what docs/service.md
# promises: the socket listens after boot, the first hostctl starts hostd
# (Type=notify, Status=), a member of group lockstep runs an experiment, a
# user outside it is refused and logged, restart and reload keep the socket
# and the queue, stop interrupts a run and keeps its results; and it prints
# systemd-analyze security's exposure of hostd.service.
#
# The container has no network (--private-network): apt installs the .deb
# offline, its dependencies are in the cached root.  Driven with nsenter
# into the container's PID 1 (no machined, no system bus on the host).
# Skipped (exit 77) only where a container cannot be made or started.
set -euo pipefail

src=${LOCKSTEP_SOURCE_ROOT:?}
bld=${LOCKSTEP_BUILD_ROOT:?}
work=$bld/systemd-test
suite=bookworm
base_include="dbus systemd systemd-sysv"

step() { printf '[%4ds] %s\n' "$SECONDS" "$*"; }
skip() { echo "SKIP: $*"; exit 77; }

[ "$(id -u)" -eq 0 ] || skip "needs root (debootstrap, systemd-nspawn)"
for t in systemd-nspawn debootstrap dpkg-buildpackage nsenter git; do
	command -v "$t" >/dev/null || skip "$t is missing (tools/install-deps installs it)"
done
mkdir -p "$work"

# ---- the package, built again only when a file that goes into it changed
# (tests/ does not: the package is built with -Dtests=false)
pkgkey=$(cd "$src" && git ls-files -z --cached --others --exclude-standard -- . ':!tests' |
	tar -c --null -T - --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
		--ignore-failed-read 2>/dev/null | sha256sum | cut -c1-16)
pkgdir=$work/pkg-$pkgkey
deb=$(ls "$pkgdir"/lockstep_*.deb 2>/dev/null | head -1 || true)
if [ -z "$deb" ]; then
	rm -rf "$work"/pkg-*
	mkdir -p "$pkgdir/lockstep"
	(cd "$src" && git ls-files -z --cached --others --exclude-standard |
		tar -c --null -T - --ignore-failed-read 2>/dev/null) | tar -x -C "$pkgdir/lockstep"
	step "building the package (dpkg-buildpackage -us -uc -b; log $pkgdir/build.log)"
	t0=$SECONDS
	if ! (cd "$pkgdir/lockstep" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
		dpkg-buildpackage -us -uc -b >"$pkgdir/build.log" 2>&1); then
		tail -30 "$pkgdir/build.log"
		echo "FAIL: dpkg-buildpackage failed"
		exit 1
	fi
	step "package built in $((SECONDS - t0)) s"
	if command -v lintian >/dev/null; then
		# clean, or each tag explained in debian/lockstep.lintian-overrides
		if ! lintian --pedantic --fail-on error,warning,info,pedantic \
			"$pkgdir"/lockstep_*.changes >"$pkgdir/lintian.txt" 2>&1; then
			cat "$pkgdir/lintian.txt"
			rm -rf "$pkgdir"
			echo "FAIL: lintian"
			exit 1
		fi
		echo "ok: lintian --pedantic: no tag that is not explained"
	fi
	rm -rf "$pkgdir/lockstep"
	deb=$(ls "$pkgdir"/lockstep_*.deb | head -1)
fi
step "package: $deb"

# meson install lands the same set as the package (less Debian's own files;
# paths under the build's prefix compared as if it were /usr)
prefix=$(meson configure "$bld" 2>/dev/null | awk '$1 == "prefix" { print $2; exit }')
rm -rf "$work/destdir"
if meson install -C "$bld" --no-rebuild --quiet --destdir "$work/destdir" >"$work/install.log" 2>&1; then
	(cd "$work/destdir" && find . -type f -o -type l) |
		sed -e "s|^\.${prefix:-/usr/local}/etc/|./etc/|" -e "s|^\.${prefix:-/usr/local}/|./usr/|" \
			-e 's/\.gz$//' | sort >"$work/meson-files"
	dpkg-deb -c "$deb" | awk '$6 !~ /\/$/ { print $6 }' | sed 's/\.gz$//' |
		grep -v -e '^\./usr/share/doc/lockstep/changelog\.Debian$' \
			-e '^\./usr/share/doc/lockstep/copyright$' -e '^\./usr/share/lintian/' |
		sort >"$work/deb-files"
	if diff -u "$work/deb-files" "$work/meson-files"; then
		echo "ok: meson install and the package install the same $(wc -l <"$work/deb-files") files"
	else
		echo "FAIL: meson install and the package differ (above: - package, + meson)"
		exit 1
	fi
else
	tail "$work/install.log"
	echo "FAIL: meson install into $work/destdir failed"
	exit 1
fi
rm -rf "$work/destdir"

# ---- the root: debootstrap from this machine's apt source, with the
# package's dependencies, cached as a tarball keyed by what went into it
mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null |
	awk -v s="$suite" '$2 == s { print $1; exit }')
[ -n "$mirror" ] || skip "no apt source for $suite is configured on this machine"
deps=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' |
	sed -e 's/|.*//' -e 's/(.*)//' -e 's/[[:space:]]//g' | grep -v '^$' || true)
include=$(printf '%s\n' $base_include $deps | sort -u | paste -sd, -)
rootkey=$(printf '%s %s %s\n' "$suite" "$mirror" "$include" | sha256sum | cut -c1-16)
tarball=$work/$suite-root-$rootkey.tar
if [ ! -f "$tarball" ]; then
	step "debootstrap $suite from $mirror with $include (a few minutes, once)"
	rm -rf "$work/root-new"
	if ! debootstrap --variant=minbase --include="$include" "$suite" "$work/root-new" \
		"$mirror" >"$work/debootstrap.log" 2>&1; then
		tail -20 "$work/debootstrap.log"
		rm -rf "$work/root-new"
		skip "debootstrap failed (log $work/debootstrap.log): no container here"
	fi
	chroot "$work/root-new" apt-get clean
	tar -C "$work/root-new" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
	rm -rf "$work/root-new" "$work"/"$suite"-root-*.tar.tmp
	find "$work" -maxdepth 1 -name "$suite-root-*.tar" ! -name "${tarball##*/}" -delete
fi

root=$work/root
rm -rf "$root"
mkdir -p "$root"
tar -C "$root" -xf "$tarball"
cp "$deb" "$root/root/lockstep.deb"
# the experiments: local guests (agent processes), nothing from outside
mkdir -p "$root/etc/lockstep-test"
cat >"$root/etc/lockstep-test/h.conf" <<'EOF'
GUEST_KIND=local
GUEST_COUNT=2
HOST_RUNS_BENCHMARKS=yes
BARRIER_TIMEOUT=30
EOF
cat >"$root/etc/lockstep-test/quick-g.conf" <<'EOF'
MMTESTS="cpu-probe"
MMTEST_ITERATIONS=2
CPU_PROBE_UNITS=200000
EOF
# long enough to be stopped halfway: 300 steps of 1 s
cat >"$root/etc/lockstep-test/long-g.conf" <<'EOF'
MMTESTS="nap"
COMMAND_NAP="sleep 1"
MMTEST_ITERATIONS=300
EOF
chmod -R a+rX "$root/etc/lockstep-test"

# ---- the container
nspawn=
pid1=
cgroups=
cleanup() {
	if [ -n "$nspawn" ] && kill -0 "$nspawn" 2>/dev/null; then
		kill -TERM "$nspawn" 2>/dev/null || true
		for _ in $(seq 100); do kill -0 "$nspawn" 2>/dev/null || break; sleep 0.2; done
		kill -KILL "$nspawn" 2>/dev/null || true
		wait "$nspawn" 2>/dev/null || true
	fi
	for cg in $cgroups; do rmdir "$cg" 2>/dev/null || true; done
	nspawn=
	pid1=
	cgroups=
}
trap 'cleanup; rm -rf "$root"' EXIT

# nspawn in a cgroup of its own (in every hierarchy the host has), so that
# two containers never share one
boot() {
	local name=lockstep-test-$$-$1 h cg
	for h in /sys/fs/cgroup/unified /sys/fs/cgroup/systemd; do
		[ -d "$h" ] || continue
		cg=$h/$name
		mkdir -p "$cg"
		cgroups="$cgroups $cg"
	done
	(
		for cg in $cgroups; do echo "$BASHPID" >"$cg/cgroup.procs"; done
		exec systemd-nspawn -D "$root" --boot --register=no --keep-unit \
			--console=pipe --private-network -M "lockstep-test-$$" </dev/null
	) >"$work/console-$1.log" 2>&1 &
	nspawn=$!
	local p
	for _ in $(seq 150); do
		kill -0 "$nspawn" 2>/dev/null || break
		for p in $(pgrep -P "$nspawn" || true); do
			[ "$(cat "/proc/$p/comm" 2>/dev/null)" = systemd ] && pid1=$p
		done
		[ -n "$pid1" ] && break
		sleep 0.2
	done
	if [ -z "$pid1" ]; then
		tail -20 "$work/console-$1.log"
		skip "systemd-nspawn did not start a systemd (console: $work/console-$1.log)"
	fi
	# systemctl needs PID 1's private socket: wait for it first
	for _ in $(seq 150); do
		[ -S "/proc/$pid1/root/run/systemd/private" ] && break
		sleep 0.2
	done
	local state
	state=$(timeout 90 nsenter -t "$pid1" -a systemctl is-system-running --wait 2>&1 || true)
	case $state in
	running | degraded) step "boot $1: systemd is PID 1 (host pid $pid1), system $state" ;;
	*)
		tail -20 "$work/console-$1.log"
		skip "the container's systemd did not come up ($state; console $work/console-$1.log)"
		;;
	esac
}

# a command in the container, as root or (as USER) a user of its
c() {
	nsenter -t "$pid1" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
		SYSTEMD_PAGER= SYSTEMD_COLORS=0 "$@"
}
as() {
	local u=$1
	shift
	c runuser -u "$u" -- "$@"
}

fails=0
ok() { echo "ok: $*"; }
bad() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
check() { # check WHAT COMMAND...: COMMAND must succeed
	local what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}
expect() { # expect WHAT GOT WANTED
	if [ "$2" = "$3" ]; then ok "$1: $2"; else bad "$1: got '$2', want '$3'"; fi
}
diagnose() {
	c systemctl status --no-pager hostd.socket hostd.service 2>&1 | tail -30 || true
	c journalctl -u hostd --no-pager 2>&1 | tail -40 || true
}

# the experiment's field from hostctl status ID --json, as its owner
field() { # field USER ID NAME
	as "$1" hostctl status "$2" --json 2>/dev/null |
		sed -n "s/.*\"$3\": *\"\{0,1\}\([^\",}]*\).*/\1/p" | head -1
}
# until experiment ID of USER has passed step N (60 s at most)
wait_running() {
	local u=$1 id=$2 n=$3
	for _ in $(seq 300); do
		local st s
		st=$(field "$u" "$id" state)
		s=$(field "$u" "$id" step)
		[ "$st" = running ] && [ "${s:-0}" -gt "$n" ] && return 0
		sleep 0.2
	done
	return 1
}
manifest_status() {
	sed -n 's/^ *"status": *"\([a-z]*\)".*/\1/p' "$root/var/lib/lockstep/results/$1/manifest.json" |
		head -1
}

# ---- 1: install with apt in a booted system, then boot it again
boot 1
step "apt-get install --no-install-recommends ./lockstep.deb (offline: its dependencies are in the root; no libvirt, local guests only)"
if ! c apt-get install -y --no-install-recommends /root/lockstep.deb >"$work/apt.log" 2>&1; then
	tail -30 "$work/apt.log"
	echo "FAIL: apt could not install the package"
	exit 1
fi
check "user and group lockstep made by postinst" c sh -c 'getent passwd lockstep >/dev/null && getent group lockstep >/dev/null'
expect "/var/lib/lockstep" "$(c stat -c '%U:%G %a' /var/lib/lockstep)" "lockstep:lockstep 711"
expect "/var/lib/lockstep/results" "$(c stat -c '%U:%G %a' /var/lib/lockstep/results)" "lockstep:lockstep 750"
expect "hostd.socket enabled" "$(c systemctl is-enabled hostd.socket || true)" enabled
expect "hostd.socket started by the install" "$(c systemctl is-active hostd.socket || true)" active
expect "hostd.service not started by the install" "$(c systemctl is-active hostd.service || true)" inactive
expect "lockstep-resume.service left disabled" "$(c systemctl is-enabled lockstep-resume.service || true)" disabled
check "man hostd is installed" c test -f /usr/share/man/man8/hostd.8.gz
c systemctl poweroff >/dev/null 2>&1 || true
wait "$nspawn" 2>/dev/null || true
cleanup

boot 2
expect "after boot: hostd.socket" "$(c systemctl is-active hostd.socket || true)" active
expect "after boot: hostd.service (socket-activated, not started)" \
	"$(c systemctl is-active hostd.service || true)" inactive
check "after boot: /run/lockstep/hostd.sock is a listening socket" \
	c sh -c 'test -S /run/lockstep/hostd.sock && grep -q /run/lockstep/hostd.sock /proc/net/unix'

# ---- 2: the first hostctl starts hostd
root_status() { c hostctl status >/dev/null; }
check "hostctl status (root) answers" root_status
expect "hostd.service activated by it" "$(c systemctl is-active hostd.service || true)" active
expect "Type" "$(c systemctl show -p Type --value hostd)" notify
status_text=$(c systemctl show -p StatusText --value hostd)
check "Status= sent by hostd: '$status_text'" test -n "$status_text"
# (grep without -q: under pipefail an early exit would fail the writer)
shows_status() { c systemctl status --no-pager hostd | grep 'Status: "' >/dev/null; }
check "systemctl status shows it" shows_status

# ---- 3: a member of group lockstep runs an experiment; others are refused
c useradd -m alice
c adduser --quiet alice lockstep
c useradd -m bob
# host-side steps (local guests) are root's only until the admin names a group
out=$(as alice hostctl submit --host-config /etc/lockstep-test/h.conf \
	--guest-config /etc/lockstep-test/quick-g.conf --run-name refused 2>&1) && rc=0 || rc=$?
refused_steps() { [ "$rc" -ne 0 ] && [[ $out == *'may not run steps on the host'* ]]; }
check "SERVICE_HOST_STEPS empty: alice's local guests refused at submit: rc $rc, '$out'" refused_steps
c sed -i 's/^SERVICE_HOST_STEPS=.*/SERVICE_HOST_STEPS=lockstep/' /etc/lockstep/hostd-service.conf
c systemctl reload hostd
# the reload is a SIGHUP that hostd handles on its own time: until it has
# reread the settings, the submit is refused as before
id=
for _ in $(seq 50); do
	id=$(as alice hostctl submit --host-config /etc/lockstep-test/h.conf \
		--guest-config /etc/lockstep-test/quick-g.conf --run-name quick 2>/dev/null) && break
	id=
	sleep 0.2
done
check "after SERVICE_HOST_STEPS=lockstep and a reload, alice's submit is accepted" test -n "$id"
step "alice submitted experiment $id"
rc=0
as alice hostctl wait "$id" >/dev/null || rc=$?
expect "hostctl wait (alice, local guests)" "$rc" 0
expect "its manifest" "$(manifest_status quick)" complete
expect "its run folder is alice's" "$(c stat -c %U /var/lib/lockstep/results/quick)" alice

out=$(as bob hostctl status 2>&1) && rc=0 || rc=$?
refused_bob() { [ "$rc" -ne 0 ] && [[ $out == *'may not use'* ]]; }
check "bob (not in group lockstep) is refused: rc $rc, '$out'" refused_bob
refused=
for _ in $(seq 25); do
	refused=$(c journalctl -u hostd --no-pager -g 'refused a control connection from bob' 2>/dev/null |
		grep refused || true)
	[ -n "$refused" ] && break
	sleep 0.2
done
check "the refusal is in journalctl -u hostd: '$refused'" test -n "$refused"

# ---- 4: reload and restart keep the socket and the queue
long=$(as alice hostctl submit --host-config /etc/lockstep-test/h.conf \
	--guest-config /etc/lockstep-test/long-g.conf --run-name long-restart)
next=$(as alice hostctl submit --host-config /etc/lockstep-test/h.conf \
	--guest-config /etc/lockstep-test/quick-g.conf --run-name after-restart)
check "experiment $long runs (step 2 passed)" wait_running alice "$long" 2
pid=$(c systemctl show -p MainPID --value hostd)
check "systemctl reload hostd" c systemctl reload hostd
expect "reload: the same hostd" "$(c systemctl show -p MainPID --value hostd)" "$pid"
expect "reload: experiment $long" "$(field alice "$long" state)" running
expect "reload: experiment $next" "$(field alice "$next" state)" queued

check "systemctl restart hostd" c systemctl restart hostd
check "restart: a new hostd" test "$(c systemctl show -p MainPID --value hostd)" != "$pid"
check "restart: /run/lockstep/hostd.sock still there" c test -S /run/lockstep/hostd.sock
expect "restart: experiment $long" "$(field alice "$long" state)" interrupted
expect "restart: its manifest" "$(manifest_status long-restart)" interrupted
check "restart: its samples kept" test -s "$root/var/lib/lockstep/results/long-restart/samples.ndjson"
rc=0
as alice hostctl wait "$next" >/dev/null || rc=$?
expect "restart: queued experiment $next ran after it (hostctl wait)" "$rc" 0

# ---- an upgrade (here a reinstall: prerm upgrade, postinst configure)
# neither stops nor restarts the service: the running experiment goes on
up=$(as alice hostctl submit --host-config /etc/lockstep-test/h.conf \
	--guest-config /etc/lockstep-test/long-g.conf --run-name long-upgrade)
check "experiment $up runs" wait_running alice "$up" 1
pid=$(c systemctl show -p MainPID --value hostd)
reinstall() {
	c apt-get install -y --reinstall --no-install-recommends /root/lockstep.deb \
		>"$work/apt-reinstall.log" 2>&1
}
check "apt-get install --reinstall (an upgrade's maintainer scripts)" reinstall
expect "upgrade: the same hostd" "$(c systemctl show -p MainPID --value hostd)" "$pid"
expect "upgrade: experiment $up" "$(field alice "$up" state)" running
expect "upgrade: hostd.socket" "$(c systemctl is-active hostd.socket || true)" active
as alice hostctl cancel "$up" >/dev/null || bad "hostctl cancel $up"
rc=0
as alice hostctl wait "$up" >/dev/null || rc=$?
expect "upgrade: experiment $up cancelled, hostctl wait" "$rc" 2

# ---- 5: stop during a run
stopped=$(as alice hostctl submit --host-config /etc/lockstep-test/h.conf \
	--guest-config /etc/lockstep-test/long-g.conf --run-name long-stop)
check "experiment $stopped runs" wait_running alice "$stopped" 2
t0=$SECONDS
check "systemctl stop hostd" c systemctl stop hostd
step "systemctl stop hostd took $((SECONDS - t0)) s"
expect "stop: hostd.service" "$(c systemctl is-active hostd.service || true)" inactive
expect "stop: hostd.socket" "$(c systemctl is-active hostd.socket || true)" active
expect "stop: its manifest" "$(manifest_status long-stop)" interrupted
check "stop: its samples kept" test -s "$root/var/lib/lockstep/results/long-stop/samples.ndjson"
expect "stop: hostctl status (activates hostd again)" "$(field alice "$stopped" state)" interrupted
# (no pgrep in a minimal root: procps is not there)
no_agents() {
	c sh -c 'for p in /proc/[0-9]*; do
		[ "$(cat "$p/comm" 2>/dev/null)" = guestagent ] && exit 1
	done; exit 0'
}
check "stop: the agents are gone" no_agents

# ---- 6: the sandbox's exposure (the runs above ran inside it)
c systemd-analyze security --no-pager hostd.service >"$work/security.txt" 2>&1 || true
exposure=$(grep -o 'Overall exposure level for hostd.service: [0-9.]* [A-Z]*' "$work/security.txt" || true)
check "systemd-analyze security: ${exposure:-none}" test -n "$exposure"
step "$exposure (the table: $work/security.txt)"

# ---- 7: baseline-vs-patched.sh's reboot, as far as a container goes: the
# kernel cannot change, so the "patched" kernel is the one running, and
# grub-reboot (no boot loader here) only records its entry; the rest is
# real: the baseline run, the resume unit enabled, systemctl reboot, the
# unit running the patched run and the comparison after the boot
mkdir -p "$root/usr/local/sbin"
printf '#!/bin/sh\necho "$*" >/var/lib/grub-reboot-entry.test\n' >"$root/usr/local/sbin/grub-reboot"
chmod 0755 "$root/usr/local/sbin/grub-reboot"
kernel=$(uname -r)
step "baseline-vs-patched.sh (log $work/baseline-vs-patched.log)"
c env PATH=/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin /usr/share/lockstep/baseline-vs-patched.sh \
	--user alice --name cmp --patched-entry "Debian GNU/Linux, with Linux $kernel" \
	--patched-kernel "$kernel" --host-config /etc/lockstep-test/h.conf \
	--guest-config /etc/lockstep-test/quick-g.conf >"$work/baseline-vs-patched.log" 2>&1 || true
expect "baseline-vs-patched: baseline run" "$(manifest_status cmp-baseline)" complete
expect "baseline-vs-patched: grub-reboot's entry" \
	"$(cat "$root/var/lib/grub-reboot-entry.test" 2>/dev/null)" "Debian GNU/Linux, with Linux $kernel"
rc=0
wait "$nspawn" 2>/dev/null || rc=$?
# systemd-nspawn exits with 133 when its container rebooted
expect "baseline-vs-patched: the container rebooted (nspawn's exit status)" "$rc" 133
nspawn=
cleanup
boot 3
expect "resume unit after the boot (Result, ExecMainStatus)" \
	"$(c systemctl show -p Result,ExecMainStatus --value lockstep-resume | paste -sd' ' -)" "success 0"
expect "baseline-vs-patched: patched run" "$(manifest_status cmp-patched)" complete
expect "resume unit disabled again" "$(c systemctl is-enabled lockstep-resume.service || true)" disabled
check "its state is gone" test ! -e "$root/var/lib/lockstep/resume"
compared() {
	c journalctl -b -u lockstep-resume --no-pager >"$work/resume-journal.txt" 2>&1
	grep -q 'cpu-probe ops_per_sec' "$work/resume-journal.txt"
}
check "hostctl compare's table is in its journal" compared

if [ "$fails" -ne 0 ]; then
	diagnose
	echo "$fails checks failed"
	exit 1
fi
step "all checks passed"
