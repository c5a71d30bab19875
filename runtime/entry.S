/* entry.S: the entry point of a static executable linked with pbitmap.
 *
 * In a static executable the C library's start-up code (_start, then
 * __libc_start_main: IRELATIVE relocations, TLS, stdio, locale) runs
 * before .preinit_array, and faults in scattered pages of the file, each
 * fault reading a whole read-ahead window.  So the linker plugin makes
 * __pbitmap_entry the program's entry point (e_entry) after the link, and
 * stores the original entry point in __pbitmap_entry_slot.  The stub runs
 * the prefetch, then jumps to the original entry with the machine as the
 * kernel left it where it matters:
 *
 *   %rsp  points at argc, then argv[], NULL, envp[], NULL, auxv: kept.
 *   %rdx  a function the program must register with atexit (the dynamic
 *         linker's fini when one ran the program, else 0): kept.
 *   %rbx  kept too; other registers hold nothing the start-up code reads.
 *
 * The slot lives in this object's read-only data and holds offsets from
 * the slot itself, read PC-relatively, so the stub needs no relocation:
 * in a static PIE it runs before the program has relocated itself.  Its
 * layout, PBITMAP_SLOT_*, is in include/pbitmap-format.h: the stub's
 * address and the walk record's (set by the linker, through the
 * R_X86_64_PC64 relocations below), the original entry point (0 until
 * the plugin redirects the entry point) and "pbm-walk".
 *
 * The plugin finds the slot through the region's entry field (see
 * doc/format.md).  The stub never reads the region: the program starts
 * the same whatever its bitmap holds.  The last two words are for the
 * libraries' runtimes: they find the executable's walk record
 * (__pbitmap_walked in walk.c) through the same field and check the
 * fourth word before they follow the third.
 */

#include <cet.h>

#include "pbitmap-format.h"
#include "pbitmap-runtime.h"

	.text
	.globl	__pbitmap_entry
	.hidden	__pbitmap_entry
	.type	__pbitmap_entry, @function
	.p2align 4
__pbitmap_entry:
	_CET_ENDBR
	push	%rbx
	push	%rdx
	mov	%rsp, %rbx		/* callee-saved: the stack as it is now */
	lea	16(%rsp), %rdi		/* the initial stack: argc, argv, ... */
	and	$-16, %rsp		/* the ABI's alignment for the call */
	call	__pbitmap_start
	mov	%rbx, %rsp
	pop	%rdx
	pop	%rbx
	lea	PBITMAP_ENTRY_SLOT_SYM(%rip), %rax
	mov	PBITMAP_SLOT_START(%rax), %rcx
	test	%rcx, %rcx
	jz	1f
	add	%rcx, %rax
	jmp	*%rax
1:	ud2				/* never redirected: cannot happen */
	.size	__pbitmap_entry, . - __pbitmap_entry

	.section .rodata.__pbitmap_entry_slot, "a", @progbits
	.globl	PBITMAP_ENTRY_SLOT_SYM
	.hidden	PBITMAP_ENTRY_SLOT_SYM
	.type	PBITMAP_ENTRY_SLOT_SYM, @object
	.p2align 4
PBITMAP_ENTRY_SLOT_SYM:
	.quad	__pbitmap_entry - PBITMAP_ENTRY_SLOT_SYM
	.quad	0
	.quad	__pbitmap_walked - PBITMAP_ENTRY_SLOT_SYM
	.ascii	PBITMAP_SLOT_MAGIC_TEXT
	.size	PBITMAP_ENTRY_SLOT_SYM, . - PBITMAP_ENTRY_SLOT_SYM

	.section .note.GNU-stack, "", @progbits
