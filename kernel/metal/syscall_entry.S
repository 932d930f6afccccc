/* The SYSCALL entry of the unikernel (LSTAR; syscalls.c sets the MSRs). The
 * program runs in ring 0 like the platform, so SYSCALL changes neither ring
 * nor stack and the return is a jump to %rcx, not SYSRET (which would drop
 * to ring 3). Linux's ABI keeps every register but rax, rcx and r11, the SSE
 * ones included: the C handler may clobber the caller-saved ones, so those
 * are saved, and the SSE state with fxsave. The 128 bytes under the
 * caller's %rsp are its red zone, which the entry skips before pushing. */

	.text
	.globl ig_metal_syscall_entry
ig_metal_syscall_entry:
	leaq -128(%rsp), %rsp
	pushq %rcx
	pushq %r11
	pushq %rdi
	pushq %rsi
	pushq %rdx
	pushq %r10
	pushq %r8
	pushq %r9
	pushq %rbp
	movq %rsp, %rbp
	andq $-16, %rsp
	subq $512, %rsp
	fxsave (%rsp)
	/* ig_metal_syscall(nr, a1..a5 in registers, a6 and the saved
	   registers' frame (%rbp: struct ig_syscall_frame) on the stack). */
	pushq %rbp
	pushq %r9
	movq %r8, %r9
	movq %r10, %r8
	movq %rdx, %rcx
	movq %rsi, %rdx
	movq %rdi, %rsi
	movq %rax, %rdi
	call ig_metal_syscall
	addq $16, %rsp
	fxrstor (%rsp)
	movq %rbp, %rsp
	popq %rbp
	popq %r9
	popq %r8
	popq %r10
	popq %rdx
	popq %rsi
	popq %rdi
	popfq                 /* the caller's flags, from r11's slot */
	movq -8(%rsp), %r11   /* and r11 = those flags, as Linux leaves it */
	popq %rcx
	leaq 128(%rsp), %rsp  /* lea: the flags stay as restored */
	jmp *%rcx

/* ig_metal_enter_libc(rsp, argc, argv): musl's __libc_start_main on the
 * stack built by libc_start.c; it never returns (exit is a syscall). */
	.globl ig_metal_enter_libc
ig_metal_enter_libc:
	movq %rdi, %rsp
	xorl %ebp, %ebp
	movq %rdx, %rdx
	movl %esi, %esi
	movq $main, %rdi
	xorl %ecx, %ecx
	xorl %r8d, %r8d
	xorl %r9d, %r9d
	call __libc_start_main
1:	cli
	hlt
	jmp 1b

	.section .note.GNU-stack, "", @progbits
