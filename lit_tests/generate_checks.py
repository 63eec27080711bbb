"""Write FileCheck lines for a test input from nimble-opt's output (like MLIR's
generate-test-checks.py). Review the result: it records what the tool does now.

    python lit_tests/generate_checks.py lit_tests/dialects/graph/ops.mlir [nimble-opt args]
"""

import re
import subprocess
import sys

_VALUE = re.compile(r"%([A-Za-z0-9_$.-]+)")


def _variable(name: str) -> str:
    var = re.sub(r"[^A-Za-z0-9_]", "_", name).upper()
    return var if var[0].isalpha() else f"V{var}"


def checks_for(output: str) -> list[str]:
    lines, seen = [], set()
    for text in output.splitlines():
        stripped = text.strip()
        if not stripped or stripped in ("builtin.module {", "}") and text in ("builtin.module {", "}"):
            continue
        if stripped.startswith(("func.func", "llvm.func internal")):  # a kernel, or a kernel's body
            seen = set()
            label = stripped.split("(")[0]
            lines.append(f"// CHECK-LABEL: {label}")
            rest = stripped[len(label):]
            lines.append(f"// CHECK-SAME: {_capture(rest, seen)}")
            continue
        directive = "CHECK-NEXT" if lines else "CHECK"
        lines.append(f"// {directive}: {_capture(stripped, seen)}")
    return lines


def _capture(text: str, seen: set[str]) -> str:
    def replace(m: re.Match) -> str:
        name = m.group(1)
        var = _variable(name)
        if name in seen:
            return f"%[[{var}]]"
        seen.add(name)
        return f"%[[{var}:[A-Za-z0-9_$.-]+]]"

    # FileCheck reads [[ and {{ specially; escape literal ones in the IR.
    text = text.replace("[[", "{{\\[\\[}}")
    return _VALUE.sub(replace, text)


def main() -> None:
    path, extra = sys.argv[1], sys.argv[2:]
    source = open(path).read()
    chunks = re.split(r"^// -----\s*$", source, flags=re.MULTILINE)
    out = []
    for chunk in chunks:
        body = "\n".join(l for l in chunk.strip("\n").splitlines() if not l.startswith("// CHECK"))
        result = subprocess.run(["nimble-opt", *extra], input=body, capture_output=True, text=True, check=True)
        out.append("\n".join(checks_for(result.stdout)) + "\n" + body.strip("\n") + "\n")
    sys.stdout.write("\n// -----\n\n".join(out))


if __name__ == "__main__":
    main()
