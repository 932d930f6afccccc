/* PID-1 duties inside a virtual machine: when the kernel itself started the
 * binary as the /init of an initramfs, mount proc, sys and dev, load the
 * drivers shipped beside it, bring up lo and eth0 from the kernel command
 * line, route Ctrl-Alt-Del to SIGINT, and power the machine off after the
 * drain. In a container, a PID namespace or a plain process it does nothing. */
#ifndef KERNEL_VM_H
#define KERNEL_VM_H

#include <stdbool.h>

/* Where images/initramfs puts the modules: NN-name.ko, loaded in name order
 * (the build numbers them so that dependencies come first). */
#define IG_VM_MODULE_DIR "/modules"

/* Returns 0 when the process is not the machine's init (nothing done) or
 * when the machine is set up; -1 after logging what failed. Call it first
 * in main, before configuration, so that even a failure there is logged on
 * the console. Costs one getpid() outside PID 1, and one stat() more as
 * PID 1 of a container. */
int ig_vm_init(void);

/* True once ig_vm_init found the process to be the machine's init. */
bool ig_vm_active(void);

/* The end of the machine's life: logs status, syncs, and powers off (or
 * restarts, with ingot.off=reboot on the kernel command line, for hosts
 * such as Firecracker that end the VM on a guest reboot). Never returns:
 * PID 1 must not exit, or the kernel panics. */
_Noreturn void ig_vm_poweroff(int status);

#endif
