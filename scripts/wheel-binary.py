#!/usr/bin/env python3
"""Copies the mcp-conform binary out of a built wheel: WHEEL OUT-DIR.

The wheel (maturin, `bindings = "bin"`) holds the binary as
`<name>-<version>.data/scripts/mcp-conform[.exe]`. The release archives and
the npm platform packages take it from there, so all three carry the same
bytes. Prints the path of the copy.
"""

import os
import shutil
import sys
import zipfile


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: wheel-binary.py WHEEL OUT-DIR", file=sys.stderr)
        return 2
    wheel, out_dir = sys.argv[1], sys.argv[2]
    with zipfile.ZipFile(wheel) as zf:
        names = [
            n
            for n in zf.namelist()
            if ".data/scripts/" in n and os.path.basename(n) in ("mcp-conform", "mcp-conform.exe")
        ]
        if len(names) != 1:
            print(f"{wheel}: expected one mcp-conform binary under .data/scripts/, found {names}", file=sys.stderr)
            return 1
        os.makedirs(out_dir, exist_ok=True)
        dest = os.path.join(out_dir, os.path.basename(names[0]))
        with zf.open(names[0]) as src, open(dest, "wb") as dst:
            shutil.copyfileobj(src, dst)
    os.chmod(dest, 0o755)
    print(dest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
