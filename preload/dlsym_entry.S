/* Our exported dlsym. glibc answers dlsym(RTLD_NEXT, name) relative to the *caller's* object,
 * found from the return address, so an ordinary C wrapper would make every RTLD_NEXT lookup
 * relative to libgputrace (HAMi-core PR #315: OpenMP's ompt_start_tool looped during
 * `import torch`). So: RTLD_NEXT for a name we do not trace is a tail jump into glibc's dlsym
 * with the caller's return address still on the stack; RTLD_NEXT for a traced driver name goes to
 * gt_dlsym_next with that return address; any other handle goes to gt_dlsym_default. */
#if defined(__x86_64__)
    .text
    .globl  dlsym
    .type   dlsym, @function
dlsym:
    .cfi_startproc
    cmpq    $-1, %rdi               /* RTLD_NEXT == (void *)-1 */
    jne     gt_dlsym_default
    pushq   %rdi
    .cfi_adjust_cfa_offset 8
    pushq   %rsi
    .cfi_adjust_cfa_offset 8
    subq    $8, %rsp                /* keep the stack 16-byte aligned for the call */
    .cfi_adjust_cfa_offset 8
    movq    %rsi, %rdi
    call    gt_dlsym_next_tracked
    addq    $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq    %rsi
    .cfi_adjust_cfa_offset -8
    popq    %rdi
    .cfi_adjust_cfa_offset -8
    testl   %eax, %eax
    jnz     1f
    jmp     *gt_real_dlsym_fn(%rip)
1:
    movq    (%rsp), %rdx            /* the caller's return address */
    jmp     gt_dlsym_next
    .cfi_endproc
    .size   dlsym, .-dlsym
#elif defined(__aarch64__)
    .text
    .globl  dlsym
    .type   dlsym, %function
dlsym:
    cmn     x0, #1                  /* RTLD_NEXT == (void *)-1 */
    b.ne    gt_dlsym_default
    stp     x29, x30, [sp, #-32]!
    stp     x0, x1, [sp, #16]
    mov     x0, x1
    bl      gt_dlsym_next_tracked
    mov     w9, w0
    ldp     x0, x1, [sp, #16]
    ldp     x29, x30, [sp], #32
    cbnz    w9, 1f
    adrp    x16, gt_real_dlsym_fn
    ldr     x16, [x16, :lo12:gt_real_dlsym_fn]
    br      x16
1:
    mov     x2, x30                 /* the caller's return address */
    b       gt_dlsym_next
    .size   dlsym, .-dlsym
#else
#error "dlsym_entry.S: add this architecture"
#endif
    .section .note.GNU-stack,"",@progbits
