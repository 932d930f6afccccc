/* The bare-metal start after boot.S: console, CPU tables, memory, clock,
 * interrupt controllers, the syscall entry, then musl's start with the
 * command line's words as argv. Runs once, on the boot stack, interrupts
 * off. A failure here prints one line and ends the machine (odd status). */
#include "cmdline.h"
#include "console.h"
#include "entropy.h"
#include "fds.h"
#include "i8042.h"
#include "idt.h"
#include "lapic.h"
#include "libc_start.h"
#include "pages.h"
#include "power.h"
#include "pvh.h"
#include "serial.h"
#include "smp.h"
#include "syscalls.h"
#include "tsc.h"

#include <stdint.h>

void ig_metal_start(uint32_t start_info_paddr);
extern char __image_end[]; /* unikernel.ld */

/* The end of the memory above the kernel that the image's unpacker
 * (images/unpack.S) wrote, stored by it before it jumps to the entry; 0
 * when the kernel was booted as linked. */
uintptr_t ig_metal_unpacked_end;

static struct ig_metal_args args;

static _Noreturn void boot_failed(const char *what)
{
	ig_console_puts("{\"level\":\"error\",\"msg\":\"metal: boot failed\",\"error\":\"");
	ig_console_puts(what);
	ig_console_puts("\"}\n");
	ig_metal_power_off(1);
}

void ig_metal_start(uint32_t start_info_paddr)
{
	const struct ig_pvh_start_info *si = (const void *)(uintptr_t)start_info_paddr;
	ig_serial_init();
	ig_metal_idt_init();
	if (si->magic != IG_PVH_MAGIC)
		boot_failed("no PVH start info");
	if (si->cmdline_paddr && ig_metal_cmdline_keep((const char *)(uintptr_t)si->cmdline_paddr) != 0)
		boot_failed("command line too long");
	if (ig_pages_init(si, (uintptr_t)__image_end, ig_metal_unpacked_end) != 0)
		boot_failed("no usable RAM in the PVH memory map");
	if (si->nr_modules && si->modlist_paddr) {
		const struct ig_pvh_modlist_entry *initrd = (const void *)(uintptr_t)si->modlist_paddr;
		ig_fds_set_initrd((const void *)(uintptr_t)initrd->paddr, (size_t)initrd->size);
	}
	/* The clock's calibration runs while the devices and tables below
	   are read, none of which reads the clock. */
	if (ig_tsc_calibrate_begin() != 0)
		boot_failed("the PIT does not count (qemu: -M microvm,pit=on)");
	/* Named at the start, as what getrandom will give keys (TLS) or not. */
	ig_console_puts("{\"level\":\"info\",\"msg\":\"metal: entropy\",\"source\":\"");
	ig_console_puts(ig_entropy_init(ig_metal_boot_cmdline()));
	ig_console_puts("\"}\n");
	ig_smp_init(si->rsdp_paddr, ig_metal_syscalls_init);
	ig_i8042_init();
	ig_fds_init();
	if (ig_metal_cmdline_args(ig_metal_boot_cmdline(), "ingot", &args) < 0)
		boot_failed("too many command-line words");
	if (ig_tsc_calibrate_end() != 0)
		boot_failed("the PIT does not count (qemu: -M microvm,pit=on)");
	ig_lapic_init();
	ig_metal_syscalls_init();
	ig_metal_libc_start(&args);
}
