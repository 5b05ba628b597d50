/* insn-count's marker (benchmarks/insn/insn-count.c): a static program whose first instruction
 * is at 0x13370000, where no other guest code runs; it only exits.
 * Built by scripts/bench-insn: gcc -static -nostdlib -no-pie -Wl,-Ttext=0x13370000 -o marker marker.S */
    .text
    .globl _start
_start:
    movl $60, %eax      /* exit(0) */
    xorl %edi, %edi
    syscall
