/* A test kernel for the platform's devices, booted under qemu by
 * tests/integration/metal_devices.test.mjs in place of the service: the
 * platform's boot (boot.S, console, power) with this file as
 * ig_metal_start. It brings up virtio-net, sends an ARP request for the
 * gateway and a DHCP discover to qemu's user network, reports what answers,
 * floods the transmit ring, checks that the device's and the keyboard's
 * interrupts reached the LAPIC, and stops on Ctrl-Alt-Del (with the word
 * check.kbd_translate on the command line, after turning the controller's
 * translation to scan-code set 1 on, as some firmware does). One line per
 * finding, "key: values", for the test to match; it judges nothing itself.
 * The TSC bounds on its waits are safety nets, never results. */
#include "kernel/metal/i8042.h"
#include "kernel/metal/ioapic.h"
#include "kernel/metal/mmio.h"
#include "kernel/metal/power.h"
#include "kernel/metal/pvh.h"
#include "kernel/metal/serial.h"
#include "kernel/metal/virtio_net.h"

#include "kernel/metal/io.h"

#include <stdint.h>
#include <string.h>

#define LAPIC_SVR 0xfee000f0u
#define LAPIC_IRR 0xfee00200u
#define KEYBOARD_CHECK_VECTOR 0x31 /* the keyboard apart from the NIC's vector */
#define FLOOD_FRAMES 1000
#define TICKS_SECOND 4000000000ull /* above any TSC rate here: waits only err long */

void ig_metal_start(uint32_t start_info_paddr);

static uint8_t mac[6];
static const uint8_t my_ip[4] = { 10, 0, 2, 15 }, gateway_ip[4] = { 10, 0, 2, 2 };
static unsigned arp_replies, dhcp_offers, other_frames;

static uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/* ---- console output without printf ---- */

static void put_dec(unsigned long v)
{
	char b[24];
	int i = sizeof b - 1;
	b[i] = 0;
	do {
		b[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	ig_serial_puts(b + i);
}

static void put_bytes(const uint8_t *p, int n, bool hex, const char *sep)
{
	static const char digits[] = "0123456789abcdef";
	for (int i = 0; i < n; i++) {
		if (i)
			ig_serial_puts(sep);
		if (hex)
			ig_serial_write((const char[2]){ digits[p[i] >> 4], digits[p[i] & 15] }, 2);
		else
			put_dec(p[i]);
	}
}

/* ---- frames out ---- */

static int send_arp_request(void)
{
	uint8_t f[42];
	memset(f, 0xff, 6);
	memcpy(f + 6, mac, 6);
	memcpy(f + 12, (const uint8_t[]){ 0x08, 0x06, 0, 1, 0x08, 0, 6, 4, 0, 1 }, 10);
	memcpy(f + 22, mac, 6);
	memcpy(f + 28, my_ip, 4);
	memset(f + 32, 0, 6);
	memcpy(f + 38, gateway_ip, 4);
	/* Two pieces, the Ethernet header and the ARP body: send gathers. */
	struct iovec iov[2] = { { f, 14 }, { f + 14, 28 } };
	return ig_virtio_net_send(iov, 2);
}

static uint16_t ip_checksum(const uint8_t *p, size_t n)
{
	uint32_t s = 0;
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static int send_dhcp_discover(void)
{
	enum { IP = 14, UDP = IP + 20, DHCP = UDP + 8, DHCP_LEN = 240 + 8, LEN = DHCP + DHCP_LEN };
	static uint8_t f[LEN];
	memset(f, 0, sizeof f);
	memset(f, 0xff, 6);
	memcpy(f + 6, mac, 6);
	f[12] = 0x08;
	f[IP] = 0x45;
	f[IP + 2] = (LEN - IP) >> 8, f[IP + 3] = (LEN - IP) & 0xff;
	f[IP + 8] = 64, f[IP + 9] = 17; /* TTL, UDP */
	memset(f + IP + 16, 0xff, 4);
	uint16_t sum = ip_checksum(f + IP, 20);
	f[IP + 10] = (uint8_t)(sum >> 8), f[IP + 11] = (uint8_t)sum;
	f[UDP + 1] = 68, f[UDP + 3] = 67;
	f[UDP + 4] = (LEN - UDP) >> 8, f[UDP + 5] = (LEN - UDP) & 0xff;
	memcpy(f + DHCP, (const uint8_t[]){ 1, 1, 6, 0, 0x12, 0x34, 0x56, 0x78, 0, 0, 0x80 }, 11);
	memcpy(f + DHCP + 28, mac, 6);
	memcpy(f + DHCP + 236, (const uint8_t[]){ 99, 130, 83, 99, 53, 1, 1, 55, 2, 1, 3, 255 }, 12);
	struct iovec iov = { f, sizeof f };
	return ig_virtio_net_send(&iov, 1);
}

/* ---- frames in ---- */

static void handle(const uint8_t *f, size_t n)
{
	if (n >= 42 && f[12] == 0x08 && f[13] == 0x06 && f[21] == 2) {
		if (arp_replies++ == 0) {
			ig_serial_puts("rx: arp-reply ");
			put_bytes(f + 28, 4, false, ".");
			ig_serial_puts(" is-at ");
			put_bytes(f + 22, 6, true, ":");
			ig_serial_puts("\n");
		}
		return;
	}
	enum { IP = 14, UDP = IP + 20, DHCP = UDP + 8 };
	if (n >= DHCP + 240 && f[12] == 0x08 && f[13] == 0 && f[IP + 9] == 17 && f[UDP + 3] == 68 &&
	    f[DHCP] == 2) {
		unsigned type = 0;
		for (size_t o = DHCP + 240; o + 2 < n && f[o] != 255; o += f[o] ? 2u + f[o + 1] : 1u) {
			if (f[o] == 53)
				type = f[o + 2];
		}
		dhcp_offers += type == 2;
		ig_serial_puts("rx: dhcp type ");
		put_dec(type);
		ig_serial_puts(" yiaddr ");
		put_bytes(f + DHCP + 16, 4, false, ".");
		ig_serial_puts(" from ");
		put_bytes(f + IP + 12, 4, false, ".");
		ig_serial_puts("\n");
		return;
	}
	other_frames++;
}

static void drain(void)
{
	static uint8_t buf[IG_VIRTIO_NET_FRAME_MAX];
	while (ig_virtio_net_poll()) {
		ssize_t n = ig_virtio_net_recv(buf, sizeof buf);
		if (n <= 0)
			break;
		handle(buf, (size_t)n);
	}
}

/* Interrupts stay off, so one that reached the LAPIC waits in its IRR. */
static bool lapic_pending(uint8_t vector)
{
	return (ig_mmio_read32(LAPIC_IRR + 0x10u * (vector / 32u)) >> (vector % 32u)) & 1;
}

static void report_device(void)
{
	/* Which transport the driver took, read back the way it found it. */
	for (uint32_t i = 0; i < 24; i++) {
		uintptr_t b = 0xfeb00000u + 0x200u * i;
		if (ig_mmio_read32(b) == 0x74726976u && ig_mmio_read32(b + 8) == 1) {
			ig_serial_puts("device: version ");
			put_dec(ig_mmio_read32(b + 4));
			ig_serial_puts(" transport ");
			put_dec(i);
			ig_serial_puts(" status ");
			put_dec(ig_mmio_read32(b + 0x70));
			ig_serial_puts(" mac ");
			put_bytes(mac, 6, true, ":");
			ig_serial_puts("\n");
		}
	}
}

/* The i8042's command byte, bit 6: translate set 2 to set 1. */
static void i8042_translate_on(void)
{
	while (inb(0x64) & 2)
		;
	outb(0x64, 0x20);
	while (!(inb(0x64) & 1))
		;
	uint8_t config = inb(0x60);
	while (inb(0x64) & 2)
		;
	outb(0x64, 0x60);
	while (inb(0x64) & 2)
		;
	outb(0x60, config | 0x40);
	ig_serial_puts("keyboard: translation on\n");
}

void ig_metal_start(uint32_t start_info_paddr)
{
	const struct ig_pvh_start_info *si = (const void *)(uintptr_t)start_info_paddr;
	const char *cmdline = si->cmdline_paddr ? (const char *)(uintptr_t)si->cmdline_paddr : "";
	ig_serial_init();
	ig_mmio_write32(LAPIC_SVR, 0x1ff); /* software-enable the LAPIC, spurious vector 0xff */
	ig_i8042_init();
	ig_ioapic_route(1, KEYBOARD_CHECK_VECTOR);
	if (ig_virtio_net_init(cmdline) != 0) {
		ig_serial_puts("device: none\n");
		ig_metal_power_off(3);
	}
	ig_virtio_net_mac(mac);
	report_device();
	ig_serial_puts(lapic_pending(IG_METAL_IRQ_VECTOR) ? "irq: before 1\n" : "irq: before 0\n");

	bool sent = send_arp_request() == 0 && send_dhcp_discover() == 0;
	ig_serial_puts(sent ? "tx: arp and dhcp sent\n" : "tx: refused\n");
	for (uint64_t end = rdtsc() + TICKS_SECOND; rdtsc() < end && !lapic_pending(IG_METAL_IRQ_VECTOR);)
		;
	ig_serial_puts(lapic_pending(IG_METAL_IRQ_VECTOR) ? "irq: after 1\n" : "irq: after 0\n");
	for (uint64_t end = rdtsc() + 20 * TICKS_SECOND; rdtsc() < end && !(arp_replies && dhcp_offers);)
		drain();

	/* More frames than the ring holds, sent as fast as it takes them. */
	unsigned flooded = 0, full = 0;
	arp_replies = 1; /* the first reply is reported already */
	unsigned replies_before = arp_replies;
	while (flooded < FLOOD_FRAMES) {
		if (send_arp_request() == 0) {
			flooded++;
		} else {
			full++;
			drain();
		}
	}
	for (uint64_t end = rdtsc() + 20 * TICKS_SECOND;
	     rdtsc() < end && arp_replies - replies_before < FLOOD_FRAMES;)
		drain();
	ig_serial_puts("flood: sent ");
	put_dec(flooded);
	ig_serial_puts(" full ");
	put_dec(full);
	ig_serial_puts(" replies ");
	put_dec(arp_replies - replies_before);
	ig_serial_puts(" other ");
	put_dec(other_frames);
	ig_serial_puts("\n");
	static uint8_t big[IG_VIRTIO_NET_FRAME_MAX + 1];
	struct iovec too_big = { big, sizeof big }, empty = { big, 0 };
	ig_serial_puts(ig_virtio_net_send(&too_big, 1) == -1 && ig_virtio_net_send(&empty, 1) == -1
			       ? "tx: oversize and empty refused\n"
			       : "tx: oversize or empty accepted\n");

	if (strstr(cmdline, "check.kbd_translate"))
		i8042_translate_on();
	ig_serial_puts("keyboard: waiting\n");
	for (uint64_t end = rdtsc() + 120 * TICKS_SECOND; rdtsc() < end;) {
		bool irq = lapic_pending(KEYBOARD_CHECK_VECTOR);
		if (ig_i8042_poll_ctrl_alt_del()) {
			ig_serial_puts(irq || lapic_pending(KEYBOARD_CHECK_VECTOR) ? "keyboard: ctrl-alt-del irq 1\n"
										     : "keyboard: ctrl-alt-del irq 0\n");
			ig_metal_power_off(0);
		}
	}
	ig_serial_puts("keyboard: nothing\n");
	ig_metal_power_off(5);
}
