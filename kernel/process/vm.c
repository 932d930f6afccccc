/* PID-1 duties inside a VM: detect that the kernel started us as its init,
 * mount proc/sys/dev, load the initramfs's drivers with the parameters the
 * kernel command line gives them, configure lo and eth0 with ioctls, and
 * power off at the end. Everything lives in static storage: this runs
 * before the runtime exists, and a failure must still reach the console. */
#include "vm.h"
#include "ingot/log.h"
#include "kernel/runtime/log_ring.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <net/route.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* syslog(2)'s action that sets the console's log level (klogctl's 8). */
#define SYSLOG_ACTION_CONSOLE_LEVEL 8
/* The inode of the initial PID namespace (include/linux/proc_ns.h): only
 * the machine's own init lives in it as PID 1. */
#define PROC_PID_INIT_INO 0xEFFFFFFCU

#define MAX_MODULES 32
#define MAX_NAME 64

static bool active;
static char cmdline[4096];

bool ig_vm_active(void)
{
	return active;
}

static void log_errno(const char *msg, const char *key, const char *what, int err)
{
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_ERROR, msg)) {
		if (key)
			ig_log_cstr(&l, key, what);
		ig_log_cstr(&l, "error", strerror(err));
		ig_log_end(&l);
	}
}

/* PID 1 of a container or of `unshare --pid` also sees getpid() == 1; the
 * PID namespace tells them apart. An initramfs has no /proc yet, so it is
 * mounted here, and unmounted again if this is not the initial namespace. */
static bool is_machine_init(void)
{
	if (getpid() != 1)
		return false;
	struct stat st;
	if (stat("/proc/self/ns/pid", &st) == 0)
		return st.st_ino == PROC_PID_INIT_INO;
	if (stat("/proc/self", &st) == 0)
		return false; /* proc is there but hides the namespace: not ours */
	mkdir("/proc", 0555);
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
		return false; /* an unprivileged container */
	if (stat("/proc/self/ns/pid", &st) == 0 && st.st_ino == PROC_PID_INIT_INO)
		return true;
	umount2("/proc", MNT_DETACH);
	return false;
}

static int mount_one(const char *src, const char *dir, const char *type, unsigned long flags)
{
	mkdir(dir, 0755);
	if (mount(src, dir, type, flags, NULL) == 0 || errno == EBUSY)
		return 0;
	log_errno("vm: mount failed", "dir", dir, errno);
	return -1;
}

/* Without /dev/console in the archive the kernel starts init with no open
 * descriptors; logs then need the console from devtmpfs. */
static void ensure_console(void)
{
	if (fcntl(1, F_GETFD) >= 0)
		return;
	int fd = open("/dev/console", O_RDWR | O_NOCTTY);
	if (fd < 0)
		return;
	for (int i = 0; i < 3; i++)
		if (fd != i)
			dup2(fd, i);
	if (fd > 2)
		close(fd);
}

static int read_cmdline(void)
{
	int fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		log_errno("vm: cannot read the kernel command line", NULL, NULL, errno);
		return -1;
	}
	ssize_t n = read(fd, cmdline, sizeof cmdline - 1);
	close(fd);
	cmdline[n > 0 ? n : 0] = '\0';
	return 0;
}

/* The next argument of the command line as the kernel splits it: spaces
 * separate, double quotes protect spaces (param="a b"). */
static const char *next_arg(const char **p, size_t *len)
{
	const char *s = *p;
	while (*s == ' ' || *s == '\n' || *s == '\t')
		s++;
	if (!*s)
		return NULL;
	const char *e = s;
	bool quoted = false;
	for (; *e && (quoted || (*e != ' ' && *e != '\n' && *e != '\t')); e++)
		if (*e == '"')
			quoted = !quoted;
	*len = (size_t)(e - s);
	*p = e;
	return s;
}

/* Kernel parameter names treat '-' and '_' alike. */
static bool name_eq(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char x = a[i] == '-' ? '_' : a[i], y = b[i] == '-' ? '_' : b[i];
		if (x != y)
			return false;
	}
	return true;
}

/* The value of key=value (e.g. "ingot.ip") copied into out, or NULL; the
 * last one wins, as with the kernel's own parameters, so that arguments
 * appended by a host override those of a boot loader's configuration. */
static const char *cmdline_value(const char *key, char *out, size_t cap)
{
	size_t klen = strlen(key), len;
	const char *p = cmdline, *a, *found = NULL;
	size_t flen = 0;
	while ((a = next_arg(&p, &len)))
		if (len > klen && a[klen] == '=' && name_eq(a, key, klen)) {
			found = a + klen + 1;
			flen = len - klen - 1;
		}
	if (!found || flen >= cap)
		return NULL;
	memcpy(out, found, flen);
	out[flen] = '\0';
	return out;
}

/* Collects "param=value" for every "module.param=value" on the command
 * line: the kernel applies those itself only to built-in drivers, so a
 * loadable one gets them through finit_module. */
static int module_params(const char *mod, size_t modlen, char *out, size_t cap)
{
	size_t used = 0, len;
	const char *p = cmdline, *a;
	out[0] = '\0';
	while ((a = next_arg(&p, &len))) {
		if (len <= modlen + 1 || a[modlen] != '.' || !name_eq(a, mod, modlen))
			continue;
		size_t n = len - modlen - 1;
		if (used + n + 2 > cap)
			return -1;
		if (used)
			out[used++] = ' ';
		memcpy(out + used, a + modlen + 1, n);
		used += n;
		out[used] = '\0';
	}
	return 0;
}

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* The .ko names in IG_VM_MODULE_DIR, sorted; getdents64 because opendir
 * allocates. Returns the count, or -1. */
static int list_modules(char names[][MAX_NAME])
{
	int fd = open(IG_VM_MODULE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	char buf[4096];
	int count = 0;
	long n;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
		for (long off = 0; off < n;) {
			struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
			off += d->d_reclen;
			size_t len = strlen(d->d_name);
			if (len < 4 || strcmp(d->d_name + len - 3, ".ko") != 0 || len >= MAX_NAME)
				continue;
			if (count == MAX_MODULES) {
				close(fd);
				return -1;
			}
			int i = count++;
			for (; i > 0 && strcmp(names[i - 1], d->d_name) > 0; i--)
				memcpy(names[i], names[i - 1], MAX_NAME);
			memcpy(names[i], d->d_name, len + 1);
		}
	}
	close(fd);
	return n < 0 ? -1 : count;
}

/* "07-virtio_net.ko" is module virtio_net: the number only orders. */
static const char *module_name(const char *file, size_t *len)
{
	const char *s = file;
	while (*s >= '0' && *s <= '9')
		s++;
	s = (s > file && *s == '-') ? s + 1 : file;
	*len = strlen(s) - 3;
	return s;
}

static int load_modules(int *loaded)
{
	static char names[MAX_MODULES][MAX_NAME];
	static char params[2048];
	char path[sizeof IG_VM_MODULE_DIR + MAX_NAME + 1];
	errno = 0;
	int count = list_modules(names);
	if (count < 0) { /* errno 0: more than MAX_MODULES */
		log_errno("vm: cannot list the modules", "dir", IG_VM_MODULE_DIR, errno ? errno : E2BIG);
		return -1;
	}
	*loaded = 0;
	for (int i = 0; i < count; i++) {
		size_t mlen;
		const char *mod = module_name(names[i], &mlen);
		memcpy(path, IG_VM_MODULE_DIR "/", sizeof IG_VM_MODULE_DIR);
		memcpy(path + sizeof IG_VM_MODULE_DIR, names[i], strlen(names[i]) + 1);
		if (module_params(mod, mlen, params, sizeof params) != 0) {
			log_errno("vm: module parameters too long", "module", names[i], E2BIG);
			return -1;
		}
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			log_errno("vm: cannot open a module", "module", names[i], errno);
			return -1;
		}
		long r = syscall(SYS_finit_module, fd, params, 0);
		int err = errno;
		close(fd);
		if (r != 0 && err != EEXIST) { /* EEXIST: built in, or loaded already */
			log_errno("vm: cannot load a module", "module", names[i], err);
			return -1;
		}
		if (r == 0)
			++*loaded;
		if (params[0]) {
			struct ig_logline l;
			if (ig_log_begin(&l, IG_LOG_INFO, "vm: module parameters")) {
				ig_log_str(&l, "module", mod, mlen);
				ig_log_cstr(&l, "params", params);
				ig_log_end(&l);
			}
		}
	}
	return 0;
}

/* A zeroed request naming the interface; cmdline_value bounds the name. */
static void ifreq_for(struct ifreq *ifr, const char *ifname)
{
	memset(ifr, 0, sizeof *ifr);
	memcpy(ifr->ifr_name, ifname, strnlen(ifname, IFNAMSIZ - 1));
}

static int set_flags_up(int s, const char *ifname)
{
	struct ifreq ifr;
	ifreq_for(&ifr, ifname);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) != 0)
		return -1;
	ifr.ifr_flags |= IFF_UP;
	return ioctl(s, SIOCSIFFLAGS, &ifr);
}

static int set_addr(int s, const char *ifname, unsigned long req, struct in_addr a)
{
	struct ifreq ifr;
	ifreq_for(&ifr, ifname);
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr = a };
	memcpy(&ifr.ifr_addr, &sin, sizeof sin);
	return ioctl(s, req, &ifr);
}

static int add_default_route(int s, struct in_addr gw)
{
	struct rtentry rt;
	memset(&rt, 0, sizeof rt);
	struct sockaddr_in any = { .sin_family = AF_INET }, via = { .sin_family = AF_INET, .sin_addr = gw };
	memcpy(&rt.rt_dst, &any, sizeof any);
	memcpy(&rt.rt_genmask, &any, sizeof any);
	memcpy(&rt.rt_gateway, &via, sizeof via);
	rt.rt_flags = RTF_UP | RTF_GATEWAY;
	return ioctl(s, SIOCADDRT, &rt);
}

/* "10.0.2.15/24" into an address and a netmask. */
static int parse_cidr(char *s, struct in_addr *addr, struct in_addr *mask)
{
	char *slash = strchr(s, '/');
	long prefix = 32;
	if (slash) {
		*slash = '\0';
		char *end;
		prefix = 0;
		for (end = slash + 1; *end >= '0' && *end <= '9' && prefix <= 32; end++)
			prefix = prefix * 10 + (*end - '0');
		if (end == slash + 1 || *end || prefix > 32)
			return -1;
	}
	if (inet_pton(AF_INET, s, addr) != 1)
		return -1;
	mask->s_addr = htonl(prefix ? 0xFFFFFFFFU << (32 - prefix) : 0);
	return 0;
}

/* lo always; the interface (ingot.if, default eth0) when ingot.ip is set. */
static int bring_up_network(void)
{
	char ip[64], gw[64], ifname[IFNAMSIZ] = "eth0";
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		log_errno("vm: no socket", NULL, NULL, errno);
		return -1;
	}
	int rc = -1;
	if (set_flags_up(s, "lo") != 0) {
		log_errno("vm: cannot bring up an interface", "if", "lo", errno);
		goto out;
	}
	cmdline_value("ingot.if", ifname, sizeof ifname);
	if (!cmdline_value("ingot.ip", ip, sizeof ip)) {
		ig_log_msg(IG_LOG_WARN, "vm: no ingot.ip on the kernel command line: only lo is up");
		rc = 0;
		goto out;
	}
	struct in_addr addr, mask, via;
	char cidr[sizeof ip];
	memcpy(cidr, ip, sizeof ip);
	if (parse_cidr(cidr, &addr, &mask) != 0) {
		log_errno("vm: bad ingot.ip (want A.B.C.D/N)", "ip", ip, EINVAL);
		goto out;
	}
	if (set_addr(s, ifname, SIOCSIFADDR, addr) != 0 || set_addr(s, ifname, SIOCSIFNETMASK, mask) != 0 ||
	    set_flags_up(s, ifname) != 0) {
		log_errno("vm: cannot configure an interface", "if", ifname, errno);
		goto out;
	}
	bool have_gw = cmdline_value("ingot.gw", gw, sizeof gw) != NULL;
	if (have_gw && inet_pton(AF_INET, gw, &via) != 1) {
		log_errno("vm: bad ingot.gw (want A.B.C.D)", "gw", gw, EINVAL);
		goto out;
	}
	if (have_gw && add_default_route(s, via) != 0) {
		log_errno("vm: cannot add the default route", "gw", gw, errno);
		goto out;
	}
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_INFO, "vm: network up")) {
		char a[INET_ADDRSTRLEN], m[INET_ADDRSTRLEN];
		ig_log_cstr(&l, "if", ifname);
		ig_log_cstr(&l, "addr", inet_ntop(AF_INET, &addr, a, sizeof a));
		ig_log_cstr(&l, "netmask", inet_ntop(AF_INET, &mask, m, sizeof m));
		if (have_gw)
			ig_log_cstr(&l, "gw", gw);
		ig_log_end(&l);
	}
	rc = 0;
out:
	close(s);
	return rc;
}

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* The machine's init proper: out of line and cold (net/cold.ld puts it in
 * the cold block), so that a process that is not a machine's PID 1 keeps
 * none of it resident. */
__attribute__((cold, noinline)) static int vm_boot(void);

int ig_vm_init(void)
{
	if (!is_machine_init())
		return 0;
	return vm_boot();
}

static int vm_boot(void)
{
	active = true;
	uint64_t t0 = now_us();
	/* proc is mounted by is_machine_init; the command line first, so that
	 * even a failure below ends the machine the way ingot.off says. Then
	 * sysfs for the drivers' view and devtmpfs for /dev/console. */
	if (read_cmdline() != 0 ||
	    mount_one("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC) != 0 ||
	    mount_one("devtmpfs", "/dev", "devtmpfs", MS_NOSUID | MS_NOEXEC) != 0)
		return -1;
	ensure_console();
	/* The console carries the service's JSON lines from here on: the
	 * kernel's own messages below KERN_ALERT stay in its ring (dmesg) rather
	 * than land in the middle of a line (a late clocksource message once
	 * split "draining" in two). */
	if (syscall(SYS_syslog, SYSLOG_ACTION_CONSOLE_LEVEL, NULL, 1) != 0)
		log_errno("vm: cannot quiet the kernel's console messages", NULL, NULL, errno);
	/* The kernel then sends SIGINT to PID 1 on Ctrl-Alt-Del instead of
	 * restarting at once: the host's shutdown request becomes a drain. */
	if (reboot(RB_DISABLE_CAD) != 0)
		log_errno("vm: cannot disable Ctrl-Alt-Del", NULL, NULL, errno);
	int loaded = 0;
	if (load_modules(&loaded) != 0 || bring_up_network() != 0)
		return -1;
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_INFO, "vm: ready")) {
		ig_log_int(&l, "modules", loaded);
		ig_log_int(&l, "vm_init_us", (int64_t)(now_us() - t0));
		ig_log_end(&l);
	}
	return 0;
}

/* ingot.off=reboot, or no ACPI (a Firecracker without it ends the VM when
 * the guest restarts through the keyboard controller, but has no way to
 * power off), selects a restart; otherwise ACPI powers off. */
static bool power_off_by_reboot(void)
{
	char v[16];
	if (cmdline_value("ingot.off", v, sizeof v))
		return strcmp(v, "reboot") == 0;
	return access("/sys/firmware/acpi", F_OK) != 0;
}

_Noreturn void ig_vm_poweroff(int status)
{
	bool by_reboot = power_off_by_reboot();
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_INFO, "vm: power off")) {
		ig_log_int(&l, "status", status);
		ig_log_cstr(&l, "by", by_reboot ? "reboot" : "poweroff");
		ig_log_end(&l);
	}
	ig_log_ring_flush(2000); /* the console's last lines, before the machine goes */
	sync();
	reboot(by_reboot ? RB_AUTOBOOT : RB_POWER_OFF);
	/* Only a missing privilege gets here; exiting PID 1 panics the kernel,
	 * which at least ends the machine under panic=-1. */
	log_errno("vm: reboot(2) failed", NULL, NULL, errno);
	_exit(status ? status : 1);
}
