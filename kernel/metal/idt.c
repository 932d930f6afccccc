/* The IDT and TSS, and the exception handler's dump: registers as text,
 * then one JSON line like the runtime's log ("cpu exception"), so that the
 * console's last line says how the machine ended. Written with the serial
 * port directly: the state of libc and of the stack is unknown here. But a
 * fault in a coroutine stack's guard page (an overflow: its #PF becomes a
 * #DF on the fault stack) ends with the process's own "stack overflow"
 * line instead (kernel/process/fatal.h), through the logger: the stack
 * that broke is not the one the handler runs on. */
#include "idt.h"
#include "console.h"
#include "power.h"
#include "serial.h"
#include "kernel/process/fatal.h"

#include <stddef.h>
#include <string.h>

/* Weak: a platform test without the runtime has none. */
#pragma weak ig_fatal_overflow_line

struct idt_gate {
	uint16_t offset_low, selector;
	uint8_t ist, type;
	uint16_t offset_mid;
	uint32_t offset_high, zero;
} __attribute__((packed));


#define KERNEL_CS 0x08
#define TSS_SEL 0x18
#define GATE_INTERRUPT 0x8e /* present, DPL 0, 64-bit interrupt gate */
#define VECTOR_DOUBLE_FAULT 8
#define VECTOR_PAGE_FAULT 14
#define VECTOR_NMI 2
#define VECTOR_MACHINE_CHECK 18

extern const uint64_t ig_metal_trap_stubs[32];
extern uint64_t ig_metal_gdt[5];
void ig_metal_irq_stub(void);

static struct idt_gate idt[256];
static struct ig_metal_tss tss;
/* A double fault is often a stack overflow: it gets a stack of its own
   (IST 1), or the CPU would triple-fault pushing its frame. 16 KiB: a
   coroutine's overflow is reported from it through the logger (a 2 KiB
   line, two syscalls). */
static uint8_t fault_stack[16384] __attribute__((aligned(16)));

static void set_gate(int v, uint64_t addr, uint8_t ist)
{
	idt[v] = (struct idt_gate){
		.offset_low = (uint16_t)addr,
		.selector = KERNEL_CS,
		.ist = ist,
		.type = GATE_INTERRUPT,
		.offset_mid = (uint16_t)(addr >> 16),
		.offset_high = (uint32_t)(addr >> 32),
	};
}

/* A GDT's TSS descriptor (slots 3 and 4) for t, whose IST 1 is the double
 * fault's stack, loaded into the task register. */
static void load_tss(uint64_t *gdt, struct ig_metal_tss *t, void *fault_stack_top)
{
	t->ist[0] = (uint64_t)fault_stack_top;
	t->iomap_base = sizeof *t;
	uint64_t base = (uint64_t)t, limit = sizeof *t - 1;
	gdt[3] = (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x89ull << 40) | ((limit >> 16 & 0xf) << 48) |
		 ((base >> 24 & 0xff) << 56);
	gdt[4] = base >> 32;
	__asm__ volatile("ltr %w0" : : "r"(TSS_SEL));
}

static void load_idt(void)
{
	struct {
		uint16_t limit;
		uint64_t base;
	} __attribute__((packed)) ptr = { sizeof idt - 1, (uint64_t)idt };
	__asm__ volatile("lidt %0" : : "m"(ptr));
}

void ig_metal_idt_init(void)
{
	load_tss(ig_metal_gdt, &tss, fault_stack + sizeof fault_stack);
	for (int v = 0; v < 32; v++)
		set_gate(v, ig_metal_trap_stubs[v],
			 v == VECTOR_DOUBLE_FAULT || v == VECTOR_NMI || v == VECTOR_MACHINE_CHECK ? 1 : 0);
	for (int v = 32; v < 256; v++)
		set_gate(v, (uint64_t)ig_metal_irq_stub, 0);
	load_idt();
}

void ig_metal_idt_load_cpu(struct ig_metal_cpu_tables *t, void *fault_stack_top)
{
	memcpy(t->gdt, ig_metal_gdt, sizeof t->gdt);
	t->gdt[3] = t->gdt[4] = 0;
	struct {
		uint16_t limit;
		uint64_t base;
	} __attribute__((packed)) ptr = { sizeof t->gdt - 1, (uint64_t)t->gdt };
	__asm__ volatile("lgdt %0" : : "m"(ptr));
	load_tss(t->gdt, &t->tss, fault_stack_top);
	load_idt();
}

static const char *const names[32] = {
	"#DE divide error", "#DB debug", "NMI", "#BP breakpoint", "#OF overflow", "#BR bound range",
	"#UD invalid opcode", "#NM device not available", "#DF double fault", "coprocessor overrun",
	"#TS invalid TSS", "#NP segment not present", "#SS stack fault", "#GP general protection",
	"#PF page fault", "reserved 15", "#MF x87 error", "#AC alignment check", "#MC machine check",
	"#XM SIMD error", "#VE virtualization", "#CP control protection", "reserved 22", "reserved 23",
	"reserved 24", "reserved 25", "reserved 26", "reserved 27", "#HV hypervisor injection",
	"#VC VMM communication", "#SX security", "reserved 31",
};

static void reg(const char *name, uint64_t v)
{
	ig_serial_puts(name);
	ig_serial_hex(v);
}

static void dec(unsigned long v)
{
	char d[24];
	size_t n = sizeof d;
	do
		d[--n] = (char)('0' + v % 10);
	while ((v /= 10) && n);
	ig_serial_write(d + n, sizeof d - n);
}

_Noreturn void ig_metal_trap(const struct ig_trap_frame *f)
{
	uint64_t cr2, cr3, fs_base_lo, fs_base_hi;
	__asm__ volatile("mov %%cr2, %0" : "=r"(cr2));
	__asm__ volatile("mov %%cr3, %0" : "=r"(cr3));
	__asm__ volatile("rdmsr" : "=a"(fs_base_lo), "=d"(fs_base_hi) : "c"(0xc0000100));
	const char *name = names[f->vector & 31];
	ig_console_flush(); /* what the program wrote comes first */
	ig_serial_puts("cpu exception: ");
	ig_serial_puts(name);
	reg(" error=", f->error);
	reg("\n  rip=", f->rip);
	reg(" cs=", f->cs);
	reg(" rflags=", f->rflags);
	reg("\n  rsp=", f->rsp);
	reg(" ss=", f->ss);
	reg(" cr2=", cr2);
	reg(" cr3=", cr3);
	reg("\n  rax=", f->rax);
	reg(" rbx=", f->rbx);
	reg(" rcx=", f->rcx);
	reg("\n  rdx=", f->rdx);
	reg(" rsi=", f->rsi);
	reg(" rdi=", f->rdi);
	reg("\n  rbp=", f->rbp);
	reg(" r8=", f->r8);
	reg(" r9=", f->r9);
	reg("\n  r10=", f->r10);
	reg(" r11=", f->r11);
	reg(" r12=", f->r12);
	reg("\n  r13=", f->r13);
	reg(" r14=", f->r14);
	reg(" r15=", f->r15);
	reg("\n  fs_base=", fs_base_lo | fs_base_hi << 32);
	ig_serial_puts("\n");
	/* CR2 is the fault's address, and still after a #PF whose frame could
	   not be pushed became a #DF. */
	if ((f->vector == VECTOR_PAGE_FAULT || f->vector == VECTOR_DOUBLE_FAULT) && ig_fatal_overflow_line &&
	    ig_fatal_overflow_line((const void *)(uintptr_t)cr2))
		ig_metal_power_off(1);
	ig_serial_puts("{\"level\":\"error\",\"msg\":\"cpu exception\",\"vector\":");
	dec(f->vector);
	ig_serial_puts(",\"exception\":\"");
	ig_serial_puts(name);
	ig_serial_puts("\",\"rip\":\"");
	ig_serial_hex(f->rip);
	ig_serial_puts("\"}\n");
	ig_metal_power_off(1);
}
