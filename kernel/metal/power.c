/* The machine's end: i8042 reset for a clean stop, isa-debug-exit for a
 * failure, and a halt with interrupts off if the machine is still there. */
#include "power.h"
#include "console.h"
#include "io.h"
#include "serial.h"

#define I8042_STATUS 0x64
#define I8042_INPUT_FULL 0x02
#define I8042_CMD_RESET 0xfe
#define DEBUG_EXIT_PORT 0xf4

_Noreturn void ig_metal_power_off(int status)
{
	__asm__ volatile("cli");
	ig_console_flush(); /* what the program wrote and the console held */
	ig_serial_drain(); /* its last line, whole */
	if (status == 0) {
		/* The controller takes a command once its input buffer is empty;
		   bounded, since a machine without one must still halt. */
		for (int i = 0; i < 100000 && (inb(I8042_STATUS) & I8042_INPUT_FULL); i++)
			;
		outb(I8042_STATUS, I8042_CMD_RESET);
	} else {
		outb(DEBUG_EXIT_PORT, (unsigned char)status);
	}
	for (;;)
		__asm__ volatile("cli; hlt");
}
