/* The bare-metal start after boot.S: console, CPU tables, memory, clock,
 * devices' common parts, then musl's start with the command line's words as
 * argv. Runs once, on the boot stack, interrupts off. */
#include "power.h"
#include "pvh.h"
#include "serial.h"

#include <stdint.h>

void ig_metal_start(uint32_t start_info_paddr);

void ig_metal_start(uint32_t start_info_paddr)
{
	const struct ig_pvh_start_info *si = (const void *)(uintptr_t)start_info_paddr;
	ig_serial_init();
	ig_serial_puts(si->magic == IG_PVH_MAGIC ? "ingot metal: booted\n" : "ingot metal: bad start info\n");
	ig_metal_power_off(1);
}
