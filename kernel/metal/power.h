/* How the bare-metal machine ends. A clean stop (status 0) resets it through
 * the i8042 keyboard controller, which qemu's -no-reboot turns into exit
 * status 0 and Firecracker into the VM's end; any other status goes to
 * qemu's isa-debug-exit port 0xf4 (qemu then exits (status << 1) | 1, odd),
 * and where neither device ends the machine the CPU halts for good with
 * interrupts off: never a triple fault, which qemu would also report as 0. */
#ifndef KERNEL_METAL_POWER_H
#define KERNEL_METAL_POWER_H

_Noreturn void ig_metal_power_off(int status);

#endif
