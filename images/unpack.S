/* The unikernel's image as it ships (build/images/unikernel.elf): this
 * stub and the kernel (unikernel.kernel.elf's loaded bytes, from its first
 * address to the end of its data) compressed with lz4's legacy format
 * (`lz4 -l -12`: a magic, then blocks, each its compressed size and an
 * LZ4 block). The PVH loader puts the stub above the kernel's memory and
 * enters it as it would the kernel (32-bit protected mode, paging off,
 * %ebx = hvm_start_info); the stub writes the kernel's bytes to the
 * address they were linked at, zeroes its bss, and jumps to its PVH entry
 * with %ebx as it came. The kernel never returns here: its allocator sees
 * this memory as free (and clears it before handing it out), so the stub
 * and its payload cost nothing after the jump.
 *
 * The make assembles it with, from the kernel's symbols:
 *   KERNEL_LOAD       its first address (its bytes are written there)
 *   KERNEL_BYTES_END  where the payload's bytes end: checked after the copy
 *   KERNEL_END        the end of its memory (its bss), zeroed up to there
 *   KERNEL_ENTRY      its PVH entry
 *   KERNEL_UNPACKED_END  its ig_metal_unpacked_end (kernel/metal/entry.c),
 *                     where the stub tells it how far up it wrote
 * and PAYLOAD, the compressed file's path as a string; it links the stub
 * at KERNEL_END or above. A payload that is
 * not lz4's legacy format, or that gives another size, writes one line to
 * COM1 and ends the machine with an odd status (isa-debug-exit; else it
 * halts): a damaged image never runs half a kernel.
 *
 * No stack: the PVH state has none. %ebx is never written. */

#define LZ4_LEGACY_MAGIC 0x184c2102
#define COM1 0x3f8
#define DEBUG_EXIT 0xf4

	/* XEN_ELFNOTE_PHYS32_ENTRY (18), name "Xen": the descriptor read as
	   a pointer-sized word (boot.S's note, for the kernel itself). */
	.section .note.pvh, "a", @note
	.p2align 2
	.long 4, 8, 18
	.asciz "Xen"
	.quad unpack_start32

	.text
	.code32
	.globl unpack_start32
unpack_start32:
	cli
	cld
	movl $payload, %esi
	cmpl $LZ4_LEGACY_MAGIC, (%esi)
	jne bad_payload
	addl $4, %esi
	movl $KERNEL_LOAD, %edi

	/* A block: its compressed size, then that many bytes, decoded to
	   %edi. %ebp is the block's end. */
next_block:
	cmpl $payload_end, %esi
	jae unpacked
	movl (%esi), %ebp
	addl $4, %esi
	cmpl $LZ4_LEGACY_MAGIC, %ebp /* a second frame: only its header */
	je next_block
	addl %esi, %ebp
	cmpl $payload_end, %ebp
	ja bad_payload

	/* %ecx octets from %esi to %edi, four at a move (under TCG a move
	   costs as much as four octets do) but the last %ecx & 3, which the
	   caller's rep movsb moves. Uses %eax. */
	.macro MOVE_WORDS
	movl %ecx, %eax
	shrl $2, %ecx
	rep movsl
	movl %eax, %ecx
	andl $3, %ecx
	.endm

	/* A sequence: a token (literals' length in its high nibble, the
	   match's less 4 in its low one; 15 continues in bytes while they
	   are 255), the literals, then (but for a block's last sequence) the
	   match's 2-byte offset back from %edi and its length's bytes. */
sequence:
	cmpl %ebp, %esi
	jae next_block
	movzbl (%esi), %edx
	incl %esi
	movl %edx, %ecx
	shrl $4, %ecx
	cmpl $15, %ecx
	jne literals
1:	movzbl (%esi), %eax
	incl %esi
	addl %eax, %ecx
	cmpl $255, %eax
	je 1b
literals:
	MOVE_WORDS
	rep movsb
	cmpl %ebp, %esi
	jae next_block
	movzwl (%esi), %eax
	addl $2, %esi
	andl $15, %edx
	cmpl $15, %edx
	jne match
2:	movzbl (%esi), %ecx
	incl %esi
	addl %ecx, %edx
	cmpl $255, %ecx
	je 2b
match:
	leal 4(%edx), %ecx
	movl %esi, %edx
	movl %edi, %esi
	subl %eax, %esi
	cmpl $4, %eax
	jb 5f
	/* Four or more back: a forward move of four reads only octets
	   already written. */
	MOVE_WORDS
5:	rep movsb /* octet by octet: an overlapping match repeats itself */
	movl %edx, %esi
	jmp sequence

unpacked:
	cmpl $KERNEL_BYTES_END, %edi
	jne bad_payload
	movl $KERNEL_END, %ecx
	subl %edi, %ecx
	xorl %eax, %eax
	rep stosb
	/* The kernel's allocator clears what this wrote before handing it
	   out (kernel/metal/pages.c): where that ends. */
	movl $payload_end, KERNEL_UNPACKED_END
	movl $0, KERNEL_UNPACKED_END + 4
	movl $KERNEL_ENTRY, %eax
	jmp *%eax

bad_payload:
	movl $bad_line, %esi
	movw $COM1, %dx
3:	lodsb
	testb %al, %al
	jz 4f
	outb %al, %dx
	jmp 3b
	/* As the kernel's failures end (kernel/metal/power.c): qemu's
	   isa-debug-exit, an odd status; else a halt. */
4:	movb $1, %al
	movw $DEBUG_EXIT, %dx
	outb %al, %dx
5:	hlt
	jmp 5b

	.section .rodata
bad_line:
	.asciz "{\"level\":\"error\",\"msg\":\"unpack: the image's payload is damaged (not lz4's legacy format, or not the kernel's size)\"}\r\n"
	.p2align 2
payload:
	.incbin PAYLOAD
payload_end:
