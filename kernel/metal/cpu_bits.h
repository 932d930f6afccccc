/* The x86 control registers' and EFER's bits that the boot paths set, as
 * plain #defines for assembly: kernel/metal/boot.S (long mode, SSE, NX),
 * kernel/metal/ap_start.S (an AP's protected mode), and the two PVH stubs
 * of images/ that run before the kernel (unpack.S, kvm_probe.S: SSE). */
#ifndef KERNEL_METAL_CPU_BITS_H
#define KERNEL_METAL_CPU_BITS_H

#define CR0_PE 0x00000001 /* protected mode */
#define CR0_MP 0x00000002 /* WAIT/FWAIT honour TS: set for SSE */
#define CR0_EM 0x00000004 /* x87 emulation: clear for SSE */
#define CR0_NE 0x00000020 /* x87 errors as exceptions */
#define CR0_WP 0x00010000 /* read-only pages bind the kernel too */
#define CR0_PG 0x80000000 /* paging */

#define CR4_PAE 0x00000020        /* 64-bit page tables (long mode needs it) */
#define CR4_OSFXSR 0x00000200     /* FXSAVE/FXRSTOR and SSE */
#define CR4_OSXMMEXCPT 0x00000400 /* SSE's exceptions as #XM */

#define MSR_EFER 0xc0000080
#define EFER_SCE 0x00000001 /* SYSCALL/SYSRET */
#define EFER_LME 0x00000100 /* long mode */
#define EFER_NXE 0x00000800 /* no-execute pages */

#endif
