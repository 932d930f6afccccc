/* Unit tests of kernel/metal/cmdline: the unikernel's kernel command line
 * as argv (the contract's line, quotes, extra spaces, other boot words left
 * for the settings table to ignore, ingot.ip/ingot.gw translated only as
 * whole prefixes), the limits on words and bytes, and the value lookup the
 * test-only fault word uses (last one wins, too long is absent), and the
 * boot's line kept for the drivers (a line too long is refused whole). */
#include "kernel/metal/cmdline.h"
#include "tests/unit/check.h"

#include <stdlib.h>

static struct ig_metal_args args;

/* Checks argv against want (NULL-terminated) after argv[0]. */
static void check_argv(const char *cmdline, const char *const *want, const char *name)
{
	int argc = ig_metal_cmdline_args(cmdline, "ingot", &args);
	int n = 0;
	while (want[n])
		n++;
	bool ok = argc == n + 1 && strcmp(args.argv[0], "ingot") == 0 && args.argv[argc] == NULL;
	for (int i = 0; ok && i < n; i++)
		ok = strcmp(args.argv[i + 1], want[i]) == 0;
	check_that(ok, name, "argc %d, argv[1] \"%s\"", argc, argc > 1 ? args.argv[1] : "");
}

#define ARGV(...) ((const char *const[]){ __VA_ARGS__, NULL })

int main(void)
{
	check_argv("ingot.ip=10.0.2.15/24 ingot.gw=10.0.2.2", ARGV("INGOT_NET_IP=10.0.2.15/24", "INGOT_NET_GW=10.0.2.2"),
		   "the contract's words become the lwIP settings");
	check_argv("", (const char *const[]){ NULL }, "an empty command line is argv[0] alone");
	check_argv(NULL, (const char *const[]){ NULL }, "no command line is argv[0] alone");
	check_argv("   \t \n", (const char *const[]){ NULL }, "blanks only are no words");
	check_argv("  PORT=9000   INGOT_MAX_BODY=100\t", ARGV("PORT=9000", "INGOT_MAX_BODY=100"),
		   "settings words pass unchanged, blanks around them dropped");
	check_argv("console=ttyS0 reboot=k virtio_mmio.device=512@0xd0000000:5 PORT=1",
		   ARGV("console=ttyS0", "reboot=k", "virtio_mmio.device=512@0xd0000000:5", "PORT=1"),
		   "other boot words stay words (the settings table ignores them)");
	check_argv("INGOT_SERVER_NAME=\"a b\" x", ARGV("INGOT_SERVER_NAME=a b", "x"),
		   "double quotes protect a space and are removed");
	check_argv("\"ingot.ip=1.2.3.4/8\"", ARGV("INGOT_NET_IP=1.2.3.4/8"), "a quoted word is translated too");
	check_argv("xingot.ip=1.2.3.4 ingot.ipx=1 ingot.ip", ARGV("xingot.ip=1.2.3.4", "ingot.ipx=1", "ingot.ip"),
		   "only a whole ingot.ip= prefix is translated");
	check_argv("ingot.ip= ingot.gw=", ARGV("INGOT_NET_IP=", "INGOT_NET_GW="),
		   "empty values stay empty (the setting judges them)");
	check_argv("INGOT_NET=tap:x", ARGV("INGOT_NET=tap:x"), "INGOT_NET on the line passes (it overrides the default)");

	/* Limits: IG_METAL_MAX_ARGS words fit with argv[0]; one more does not. */
	static char line[IG_METAL_MAX_ARGS * 4 + 8];
	size_t len = 0;
	for (int i = 0; i < IG_METAL_MAX_ARGS - 1; i++)
		len += (size_t)sprintf(line + len, "w%d ", i % 10);
	CHECK_INT(ig_metal_cmdline_args(line, "ingot", &args), IG_METAL_MAX_ARGS, "the most words fit");
	sprintf(line + len, "last");
	CHECK_INT(ig_metal_cmdline_args(line, "ingot", &args), -1, "one word too many is refused");
	char *big = malloc(IG_METAL_ARGS_BYTES + 16);
	memset(big, 'a', IG_METAL_ARGS_BYTES + 15);
	big[IG_METAL_ARGS_BYTES + 15] = '\0';
	CHECK_INT(ig_metal_cmdline_args(big, "ingot", &args), -1, "a word longer than the buffer is refused");
	memcpy(big, "ingot.ip=", 9);
	big[IG_METAL_ARGS_BYTES - 10] = '\0'; /* fits as typed, not once translated */
	CHECK_INT(ig_metal_cmdline_args(big, "ingot", &args), -1, "a word that only overflows translated is refused");
	free(big);

	char v[16];
	const char *got = ig_metal_cmdline_value("ingot.test_fault=ud PORT=1", "ingot.test_fault", v, sizeof v);
	CHECK(got && strcmp(got, "ud") == 0, "a value is found");
	got = ig_metal_cmdline_value("a=1 a=2", "a", v, sizeof v);
	CHECK(got && strcmp(got, "2") == 0, "the last one wins");
	CHECK(ig_metal_cmdline_value("ab=1 a", "a", v, sizeof v) == NULL, "a longer name or a bare word is no match");
	CHECK(ig_metal_cmdline_value("a=0123456789abcdef", "a", v, sizeof v) == NULL, "a value too long is absent");
	got = ig_metal_cmdline_value("a=\"x y\"", "a", v, sizeof v);
	CHECK(got && strcmp(got, "x y") == 0, "a quoted value loses its quotes");
	CHECK(ig_metal_cmdline_value(NULL, "a", v, sizeof v) == NULL, "no command line has no value");

	CHECK(strcmp(ig_metal_boot_cmdline(), "") == 0, "before the boot keeps a line, it is empty");
	char keep[IG_METAL_CMDLINE_MAX];
	memset(keep, 'k', sizeof keep - 1);
	keep[sizeof keep - 1] = '\0';
	CHECK_INT(ig_metal_cmdline_keep(keep), 0, "the longest line is kept");
	CHECK(strcmp(ig_metal_boot_cmdline(), keep) == 0, "the kept line is the boot's, whole");
	CHECK_INT(ig_metal_cmdline_keep("PORT=1 ingot.test_fault=ud"), 0, "a short line replaces it");
	char *over = malloc(IG_METAL_CMDLINE_MAX + 1);
	memset(over, 'o', IG_METAL_CMDLINE_MAX);
	over[IG_METAL_CMDLINE_MAX] = '\0';
	CHECK_INT(ig_metal_cmdline_keep(over), -1, "a line without room for its NUL is refused");
	free(over);
	got = ig_metal_cmdline_value(ig_metal_boot_cmdline(), "ingot.test_fault", v, sizeof v);
	CHECK(got && strcmp(got, "ud") == 0, "a refused line leaves the kept one as it was");
	return check_done();
}
