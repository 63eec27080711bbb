"""The primitives of the runtime's own machine code, each written once.

The launch fast path (`launcher`), the worker threads (`workers`), the chunks' barriers
and shared buffers (`sync`) and the replay of a recorded run (`replay`) are small
functions JIT-compiled once per process (`llvm_jit.support_engine`). They are built with
llvmlite's IR builder from the pieces here: addressing a word of a state or an object,
copying a slot template, calling a kernel on its slots, the bounded spin-wait that yields
the CPU (or sleeps) once it has spun long enough, the futex call, the compare-and-swap
claim of a job, loops over a count and over records of varying length, and the
time-stamp test for a late chunk.

Pointers are typed (`i64*`, `i8*`): llvmlite's builder checks pointee types on stores
and calls, and LLVM reads them as opaque pointers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from llvmlite import binding, ir

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
VOID = ir.VoidType()
P8, P32, P64 = I8.as_pointer(), I32.as_pointer(), I64.as_pointer()
NULL = ir.Constant(P8, None)
CHUNK = ir.FunctionType(VOID, [P8])
"""A kernel, or a chunk of one: called on its argument slots."""


def module() -> ir.Module:
    """An empty module for the host (the support engine compiles for it)."""
    m = ir.Module()
    m.triple = binding.get_process_triple()
    return m


def declare(m: ir.Module, name: str, result: ir.Type, params: Sequence[ir.Type], var_arg: bool = False) -> ir.Function:
    """The function `name` of `m`, declared on first use."""
    existing = m.globals.get(name)
    if isinstance(existing, ir.Function):
        return existing
    return ir.Function(m, ir.FunctionType(result, list(params), var_arg=var_arg), name)


class Emitter:
    """Builds one function of `m`: `arg` holds its parameters by name, `b` the builder."""

    def __init__(self, m: ir.Module, name: str, result: ir.Type, params: Sequence[tuple[str, ir.Type]]):
        self.module = m
        self.function = declare(m, name, result, [t for _, t in params])
        for value, (label, _) in zip(self.function.args, params):
            value.name = label
        self.arg = {label: value for value, (label, _) in zip(self.function.args, params)}
        self.b = ir.IRBuilder(self.function.append_basic_block("entry"))

    def block(self, name: str) -> ir.Block:
        return self.function.append_basic_block(name)

    def enter(self, block: ir.Block) -> None:
        self.b.position_at_end(block)

    # -- memory ----------------------------------------------------------------------
    def word(self, base: ir.Value, index: int | ir.Value, kind: ir.Type = I64) -> ir.Value:
        """A pointer to word `index` (of 8 bytes) of `base`, as a `kind` pointer."""
        pointer = self.b.gep(self.b.bitcast(base, P64), [_i64(index)])
        return pointer if kind is I64 else self.b.bitcast(pointer, kind.as_pointer())

    def byte(self, base: ir.Value, offset: int | ir.Value, kind: ir.Type = I8) -> ir.Value:
        """A pointer to byte `offset` of `base`, as a `kind` pointer."""
        pointer = self.b.gep(self.b.bitcast(base, P8), [_i64(offset)])
        return pointer if kind is I8 else self.b.bitcast(pointer, kind.as_pointer())

    def field(self, base: ir.Value, offset: int, kind: ir.Type) -> ir.Value:
        """The `kind` value at byte `offset` of the object at `base`."""
        return self.b.load(self.byte(base, offset, kind))

    def load_word(self, base: ir.Value, index: int | ir.Value) -> ir.Value:
        return self.b.load(self.word(base, index))

    def record(self, states: ir.Value, index: ir.Value, words: int) -> ir.Value:
        """Record `index` of an array of `words`-word records."""
        return self.byte(states, self.b.mul(index, I64(words * 8)))

    # -- calls -----------------------------------------------------------------------
    def call(self, name: str, result: ir.Type, args: Sequence[ir.Value], var_arg: bool = False) -> ir.Value:
        params = [a.type for a in args] if not var_arg else [args[0].type]
        return self.b.call(declare(self.module, name, result, params, var_arg), list(args))

    def copy_words(self, to: ir.Value, source: ir.Value, count: ir.Value) -> None:
        """Copy `count` words (a slot template onto a launch's slots)."""
        self.call("llvm.memcpy.p0.p0.i64", VOID, [self.b.bitcast(to, P8), self.b.bitcast(source, P8),
                                                  self.b.shl(count, I64(3)), I1(0)])

    def run_chunk(self, kernel: ir.Value, slots: ir.Value) -> None:
        """Call a kernel (a pointer) on its argument slots."""
        self.b.call(self.b.bitcast(kernel, CHUNK.as_pointer()), [self.b.bitcast(slots, P8)])

    def yield_cpu(self) -> None:
        self.call("sched_yield", I32, [])

    def cycles(self) -> ir.Value:
        """The time-stamp counter."""
        return self.call("llvm.readcyclecounter", I64, [])

    def later_than(self, t0: ir.Value, cycles: int) -> ir.Value:
        """Whether more than `cycles` have passed since `t0`."""
        return self.b.icmp_unsigned(">", self.b.sub(self.cycles(), t0), I64(cycles))

    def futex(self, number: int, word: ir.Value, op: int, value: ir.Value | int,
              timeout: ir.Value | None = None) -> None:
        """The futex system call (its number on this machine: `number`) on the 32-bit `word`."""
        args = [I64(number), self.b.bitcast(word, P8), I64(op), _i64(value)]
        self.call("syscall", I64, args + ([timeout] if timeout is not None else []), var_arg=True)

    def claim(self, claimed: ir.Value, job: ir.Value) -> ir.Value:
        """Whether this side claims job `job` (an i32): `*claimed` moves from `job - 1`
        to `job` for exactly one claimant."""
        swap = self.b.cmpxchg(self.b.bitcast(claimed, P32), self.b.sub(job, I32(1)), job, "acq_rel", "acquire")
        return self.b.extract_value(swap, 1)

    # -- control ---------------------------------------------------------------------
    def each(self, start: int, count: ir.Value, body: Callable[[ir.Value], None], name: str) -> None:
        """`for i in range(start, count): body(i)`; the builder continues after it."""
        def run(i: ir.Value, carried: list[ir.Value]) -> list[ir.Value]:
            body(i)
            return []

        self.counted(start, count, [], run, name)

    def each_record(self, first: ir.Value, count: ir.Value, body: Callable[[ir.Value, ir.Value], ir.Value],
                    name: str) -> None:
        """For each of `count` records of varying length laid out from `first` (an i64
        pointer): `body(i, record)` returns the record's length in words."""
        self.counted(0, count, [(first, f"{name}.record")],
                     lambda i, carried: [self.b.gep(carried[0], [body(i, carried[0])])], name)

    def counted(self, start: int, count: ir.Value, carried: Sequence[tuple[ir.Value, str]],
                body: Callable[[ir.Value, list[ir.Value]], list[ir.Value]], name: str) -> None:
        """`for i in range(start, count)` carrying values (each with its initial value and
        name): `body(i, values)` returns their next values. The builder continues after it."""
        head, step, done = self.block(name), self.block(f"{name}.body"), self.block(f"{name}.done")
        before = self.b.block
        self.b.branch(head)
        self.enter(head)
        i = self.b.phi(I64, name)
        i.add_incoming(I64(start), before)
        values = []
        for initial, value_name in carried:
            values.append(self.b.phi(initial.type, value_name))
            values[-1].add_incoming(initial, before)
        self.b.cbranch(self.b.icmp_signed("<", i, count), step, done)
        self.enter(step)
        following = body(i, values)
        i.add_incoming(self.b.add(i, I64(1)), self.b.block)
        for value, after in zip(values, following, strict=True):
            value.add_incoming(after, self.b.block)
        self.b.branch(head)
        self.enter(done)

    def spin_until(self, ready: Callable[[], ir.Value], limit: int, slow: Callable[[], None] | None = None,
                   tired: Callable[[ir.Value], ir.Value] | None = None, restart: bool = False,
                   name: str = "spin") -> None:
        """Wait until `ready()` (emitted in the loop) holds: check, and after `limit`
        checks (and `tired(over_limit)`, if given) run `slow()` (default: yield the CPU)
        before each further check, or, with `restart`, before `limit` more. The builder
        continues where `ready()` held."""
        check, again, late, done = (self.block(f"{name}{s}") for s in ("", ".again", ".slow", ".done"))
        before = self.b.block
        self.b.branch(check)
        self.enter(check)
        spins = self.b.phi(I64, f"{name}.n")
        spins.add_incoming(I64(0), before)
        self.b.cbranch(ready(), done, again)
        self.enter(again)
        following = self.b.add(spins, I64(1))
        over = self.b.icmp_signed(">", spins, I64(limit))
        over = tired(over) if tired is not None else over
        spins.add_incoming(following, self.b.block)
        self.b.cbranch(over, late, check)
        self.enter(late)
        (slow or self.yield_cpu)()
        spins.add_incoming(I64(0) if restart else following, self.b.block)
        self.b.branch(check)
        self.enter(done)


def keep(into: list[ir.Value], value: ir.Value) -> ir.Value:
    """`value`, kept in `into`: what a wait's condition read, for use after the wait."""
    into.append(value)
    return value


def _i64(value: int | ir.Value) -> ir.Value:
    return I64(value) if isinstance(value, int) else value
