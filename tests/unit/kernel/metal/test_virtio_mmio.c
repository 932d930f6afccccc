/* Unit tests of kernel/metal/virtio_mmio's command-line side: the
 * `virtio_mmio.device=SIZE@BASE:IRQ[:ID]` word parser (a table of accepted
 * words with every field checked and of rejected ones named after the rule
 * they break, each input flush against an unreadable page), the collection
 * of windows from a whole command line, and the choice of a transport among
 * fake register windows mapped below 4 GiB (magic, version, device id). */
#define _DEFAULT_SOURCE
#include "kernel/metal/virtio_mmio.h"
#include "tests/unit/check.h"
#include "tests/unit/guard.h"

struct good_case {
	const char *name, *in;
	uint64_t size, base;
	uint32_t irq;
};

static const struct good_case good[] = {
	{ "qemu microvm acpi=off", "virtio_mmio.device=512@0xfeb00e00:12", 512, 0xfeb00e00, 12 },
	{ "Firecracker's K size", "virtio_mmio.device=4K@0xd0000000:5", 4096, 0xd0000000, 5 },
	{ "with a device id", "virtio_mmio.device=4K@0xd0000000:5:0", 4096, 0xd0000000, 5 },
	{ "M size, decimal base", "virtio_mmio.device=1M@4096:30", 1u << 20, 4096, 30 },
	{ "hex size, 0X and upper-case digits", "virtio_mmio.device=0x200@0XFEB0AB00:24", 0x200,
	  0xfeb0ab00, 24 },
	{ "lower-case g size above 4 GiB", "virtio_mmio.device=1g@0x100000000:1", 1u << 30,
	  0x100000000ull, 1 },
	{ "lower-case k", "virtio_mmio.device=4k@0x1000:47", 4096, 0x1000, 47 },
};

static const struct {
	const char *name, *in;
} bad[] = {
	{ "nothing after the =", "virtio_mmio.device=" },
	{ "size 0", "virtio_mmio.device=0@0x1000:5" },
	{ "no @", "virtio_mmio.device=4K0x1000:5" },
	{ "no IRQ", "virtio_mmio.device=4K@0x1000" },
	{ "empty IRQ", "virtio_mmio.device=4K@0x1000:" },
	{ "hexadecimal IRQ", "virtio_mmio.device=4K@0x1000:0x5" },
	{ "junk after the IRQ", "virtio_mmio.device=4K@0x1000:5x" },
	{ "empty id", "virtio_mmio.device=4K@0x1000:5:" },
	{ "two ids", "virtio_mmio.device=4K@0x1000:5:1:2" },
	{ "unknown size suffix", "virtio_mmio.device=4T@0x1000:5" },
	{ "0x without digits", "virtio_mmio.device=4K@0x:5" },
	{ "empty base", "virtio_mmio.device=4K@:5" },
	{ "negative size", "virtio_mmio.device=-4K@0x1000:5" },
	{ "size overflows", "virtio_mmio.device=99999999999999999999@0x1000:5" },
	{ "size overflows through its suffix", "virtio_mmio.device=17179869184G@0:5" },
	{ "base + size overflows", "virtio_mmio.device=4K@0xfffffffffffff000:5" },
	{ "IRQ above 32 bits", "virtio_mmio.device=4K@0x1000:4294967296" },
	{ "another word's name", "virtio_mmio.devicex=4K@0x1000:5" },
	{ "names are case-sensitive", "Virtio_mmio.device=4K@0x1000:5" },
	{ "an unrelated word", "console=ttyS0" },
	{ "the prefix cut short", "virtio_mmio.dev" },
};

static void test_words(struct guard *g)
{
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		const struct good_case *c = &good[i];
		size_t len = strlen(c->in);
		struct ig_virtio_mmio_window w = { 0 };
		bool ok = ig_virtio_mmio_parse_word(guard_put(g, c->in, len), len, &w);
		check_that(ok && w.size == c->size && w.base == c->base && w.irq == c->irq, c->name,
			   "ok %d size %#jx base %#jx irq %u", ok, (uintmax_t)w.size, (uintmax_t)w.base,
			   w.irq);
	}
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		size_t len = strlen(bad[i].in);
		struct ig_virtio_mmio_window w = { 7, 7, 7 };
		bool ok = ig_virtio_mmio_parse_word(guard_put(g, bad[i].in, len), len, &w);
		check_that(!ok && w.size == 7 && w.base == 7 && w.irq == 7, bad[i].name,
			   "accepted, or the output changed");
	}
	/* The length bounds the word: a valid prefix of a longer buffer. */
	const char *in = "virtio_mmio.device=4K@0x1000:5 tail";
	struct ig_virtio_mmio_window w;
	CHECK(ig_virtio_mmio_parse_word(in, 30, &w) && w.irq == 5, "the length ends the word");
	CHECK(!ig_virtio_mmio_parse_word(in, 29, &w), "a word cut before its IRQ is refused");
}

static void test_command_lines(struct guard *g)
{
	struct ig_virtio_mmio_window w[4];
	const char *line = "console=ttyS0 virtio_mmio.device=512@0xfeb00e00:12 reboot=k  "
			   "virtio_mmio.device=512@0xfeb00c00:11\tPORT=8080";
	size_t n = ig_virtio_mmio_windows(guard_put(g, line, strlen(line) + 1), w, 4);
	CHECK(n == 2 && w[0].base == 0xfeb00e00 && w[0].irq == 12 && w[1].base == 0xfeb00c00 &&
		      w[1].irq == 11,
	      "two words among others, spaces and a tab, in order");
	CHECK_INT(ig_virtio_mmio_windows(guard_put(g, "", 1), w, 4), 0, "an empty command line");
	CHECK_INT(ig_virtio_mmio_windows(guard_put(g, "   \t ", 6), w, 4), 0, "only blanks");
	const char *three = "virtio_mmio.device=1K@1024:1 virtio_mmio.device=1K@2048:2 "
			    "virtio_mmio.device=1K@3072:3";
	n = ig_virtio_mmio_windows(guard_put(g, three, strlen(three) + 1), w, 2);
	CHECK(n == 2 && w[1].irq == 2, "at most max windows");
	const char *mixed = "virtio_mmio.device=1K@1024:x xvirtio_mmio.device=1K@2048:2 "
			    "virtio_mmio.device=1K@3072:3 ";
	n = ig_virtio_mmio_windows(guard_put(g, mixed, strlen(mixed) + 1), w, 4);
	CHECK(n == 1 && w[0].irq == 3, "malformed and foreign words skipped, trailing blank");
}

/* Fake register windows: plain memory below 4 GiB holding what a probe reads. */
#define FAKE_BASE 0x50000000ul
#define FAKE_STRIDE 0x1000ul

static void fake_transport(uint8_t *map, int slot, uint32_t magic, uint32_t version, uint32_t id)
{
	uint32_t *regs = (uint32_t *)(map + FAKE_STRIDE * (size_t)slot);
	regs[0] = magic;
	regs[1] = version;
	regs[2] = id;
}

static void test_find(void)
{
	uint8_t *map = mmap((void *)FAKE_BASE, 4 * FAKE_STRIDE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (map != (void *)FAKE_BASE) {
		check_skip("find among the command line's windows", "0x50000000 not mappable here");
		return;
	}
	fake_transport(map, 0, 0x12345678, 2, 1);               /* not virtio */
	fake_transport(map, 1, IG_VIRTIO_MMIO_MAGIC, 2, 0);     /* an empty placeholder */
	fake_transport(map, 2, IG_VIRTIO_MMIO_MAGIC, 3, 1);     /* an unknown version */
	fake_transport(map, 3, IG_VIRTIO_MMIO_MAGIC, 1, 1);     /* a legacy network device */
	const char *line = "virtio_mmio.device=4K@0x50000000:5 virtio_mmio.device=4K@0x50001000:6 "
			   "virtio_mmio.device=4K@0x50002000:7 virtio_mmio.device=4K@0x50003000:8";
	struct ig_virtio_mmio dev;
	CHECK(ig_virtio_mmio_find(line, 1, &dev) && dev.base == FAKE_BASE + 3 * FAKE_STRIDE &&
		      dev.version == 1 && dev.gsi == 8,
	      "skips a wrong magic, an empty slot, an unknown version; takes the IRQ as GSI");
	fake_transport(map, 2, IG_VIRTIO_MMIO_MAGIC, 2, 1);
	CHECK(ig_virtio_mmio_find(line, 1, &dev) && dev.base == FAKE_BASE + 2 * FAKE_STRIDE &&
		      dev.version == 2 && dev.gsi == 7,
	      "the first network device wins");
	CHECK(!ig_virtio_mmio_find(line, 2, &dev), "no device of another id");
	CHECK(!ig_virtio_mmio_find("virtio_mmio.device=4K@0x50002000:48", 1, &dev),
	      "an IRQ past the second IOAPIC is not used");
	CHECK(!ig_virtio_mmio_find("virtio_mmio.device=256@0x50002000:7", 1, &dev),
	      "a window too small for the registers is not used");
	munmap(map, 4 * FAKE_STRIDE);
}

int main(void)
{
	struct guard g;
	if (!guard_init(&g, 4096) || !guard_faults(&g)) {
		printf("Bail out! no guard page\n");
		return 1;
	}
	test_words(&g);
	test_command_lines(&g);
	test_find();
	guard_free(&g);
	return check_done();
}
