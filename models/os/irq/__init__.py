"""Interrupts: hard-IRQ entry and exit on a CPU (``kernel/entry``, ``kernel/softirq.c``'s
``irq_enter``/``irq_exit``, ``arch/x86/kernel/irq.c``), one level of the CPU's runner, and the work an
interrupt does (``irqwork``: device vectors, the timer interrupt, IPIs; the name is the model's: the
kernel's deferred ``irq_work`` queue, ``kernel/irq_work.c``, is not modelled)."""
