/* The PVH entry: qemu's microvm (and Firecracker) start the image here in
 * 32-bit protected mode, paging off, %ebx = the hvm_start_info's physical
 * address. This builds the identity map of the low 4 GiB (2 MiB pages, the
 * 0xfe000000+ device area uncached), enters long mode with SSE on, and calls
 * ig_metal_start(start_info) on the boot stack. Nothing here returns. */

#include "kernel/metal/cpu_bits.h"

#define PTE_P_RW_PS 0x83       /* present, writable, 2 MiB page */
#define PTE_PWT_PCD 0x18       /* uncached: device registers */
#define MMIO_FIRST_2M (0xfe000000 >> 21)

/* XEN_ELFNOTE_PHYS32_ENTRY (18), name "Xen": qemu reads the descriptor as a
 * pointer-sized word at the 4-byte-aligned offset, hence .quad and align 4. */
	.section .note.pvh, "a"
	.p2align 2
	.long 4, 8, 18
	.asciz "Xen"
	.quad pvh_start32

	.section .text.boot, "ax"
	.code32
	.globl pvh_start32
pvh_start32:
	cli
	cld
	/* The clock's origin: startup_us counts from here. */
	rdtsc
	movl %eax, ig_metal_entry_tsc
	movl %edx, ig_metal_entry_tsc + 4
	movl %ebx, %esi                 /* start_info, kept for C */

	/* Page directories: 2048 entries of 2 MiB cover 4 GiB. */
	movl $boot_pd, %edi
	xorl %ecx, %ecx
1:	movl %ecx, %eax
	shll $21, %eax
	orl $PTE_P_RW_PS, %eax
	cmpl $MMIO_FIRST_2M, %ecx
	jb 2f
	orl $PTE_PWT_PCD, %eax
2:	movl %eax, (%edi,%ecx,8)
	movl $0, 4(%edi,%ecx,8)
	incl %ecx
	cmpl $2048, %ecx
	jb 1b
	/* Four PDPT entries, one PML4 entry. */
	xorl %ecx, %ecx
3:	movl %ecx, %eax
	shll $12, %eax
	addl $boot_pd + 3, %eax
	movl %eax, boot_pdpt(,%ecx,8)
	movl $0, boot_pdpt + 4(,%ecx,8)
	incl %ecx
	cmpl $4, %ecx
	jb 3b
	movl $boot_pdpt + 3, boot_pml4
	movl $0, boot_pml4 + 4

	movl $start64_far, %ebp
	/* fall through */

/* Long mode from 32-bit protected mode, paging off, a flat data segment
 * loaded: this page table, PAE, SSE, NX where CPUID offers it, boot.S's
 * GDT and its data segment (FS and GS null), then the 64-bit code that the
 * far pointer at %ebp names (no stack
 * is needed: PVH gives none). The boot CPU comes here with %esi (the
 * start info) kept; every other CPU from ap_start.S. */
	.globl ig_metal_long_mode32
ig_metal_long_mode32:
	movl $boot_pml4, %eax
	movl %eax, %cr3
	movl %cr4, %eax
	orl $(CR4_PAE | CR4_OSFXSR | CR4_OSXMMEXCPT), %eax
	movl %eax, %cr4
	/* NXE only where CPUID offers NX: setting it otherwise faults. */
	movl $0x80000001, %eax
	cpuid
	movl $(EFER_LME | EFER_SCE), %edi
	btl $20, %edx
	jnc 4f
	orl $EFER_NXE, %edi
4:	movl $MSR_EFER, %ecx
	rdmsr
	orl %edi, %eax
	wrmsr
	movl %cr0, %eax
	andl $~CR0_EM, %eax
	orl $(CR0_PE | CR0_MP | CR0_NE | CR0_WP | CR0_PG), %eax
	movl %eax, %cr0
	lgdt ig_metal_gdt_ptr
	movl $0x10, %eax
	movl %eax, %ds
	movl %eax, %es
	movl %eax, %ss
	xorl %eax, %eax
	movl %eax, %fs
	movl %eax, %gs
	ljmpl *(%ebp)

	.code64
start64:
	leaq boot_stack_top(%rip), %rsp
	movl %esi, %edi                 /* zero-extends: start_info */
	call ig_metal_start
5:	cli
	hlt
	jmp 5b

/* Null, 64-bit code (0x08), data (0x10), and a TSS slot (0x18, 16 bytes)
 * that idt.c fills in for the double fault's own stack. */
	.data
	.p2align 4
	.globl ig_metal_gdt
ig_metal_gdt:
	.quad 0
	.quad 0x00af9a000000ffff
	.quad 0x00cf92000000ffff
	.quad 0, 0
ig_metal_gdt_end:
	.globl ig_metal_gdt_ptr
ig_metal_gdt_ptr:
	.word ig_metal_gdt_end - ig_metal_gdt - 1
	.quad ig_metal_gdt

/* A far pointer (offset, then selector 0x08: 64-bit code) for
 * ig_metal_long_mode32's jump. */
start64_far:
	.long start64
	.word 0x08

	.globl ig_metal_entry_tsc
	.p2align 3
ig_metal_entry_tsc:
	.quad 0

	.bss
	.p2align 12
boot_pml4:  .skip 4096
boot_pdpt:  .skip 4096
boot_pd:    .skip 4096 * 4
	.p2align 4
boot_stack: .skip 65536
boot_stack_top:

	.section .note.GNU-stack, "", @progbits
