"""Writes .npy files with hostile and unusual headers into DIR, named VERDICT-NAME.npy, and prints
"VERDICT NAME SHAPE" per file. NumPy is the oracle: VERDICT is "ok" when np.load reads the file,
"bad" when it refuses it, and "dup" for a repeated key (which NumPy reads, keeping the last, and
zarrpp refuses). A verdict other than the one the name expects is reported on stderr.

    /usr/bin/python3 tests/cli/npy_headers.py DIR
"""
import io
import os
import struct
import sys

import numpy as np


def npy(header, data, major=1, minor=0, pad=True):
    h = header
    if pad:
        pre = 10 if major == 1 else 12
        total = pre + len(h) + 1
        h = h + ' ' * ((64 - total % 64) % 64) + '\n'
    hb = h.encode('latin1' if major < 3 else 'utf8')
    if major == 1:
        pre = b'\x93NUMPY' + bytes([major, minor]) + struct.pack('<H', len(hb))
    else:
        pre = b'\x93NUMPY' + bytes([major, minor]) + struct.pack('<I', len(hb))
    return pre + hb + data


D16 = bytes(range(16))
cases = {
 # name: (header, data, major, minor) ; expected NumPy verdict decided by the oracle
 "dup_shape": ("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), 'shape': (4,), }", D16 * 2, 1, 0),
 "dup_descr": ("{'descr': '<i2', 'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", D16, 1, 0),
 "shape_int": ("{'descr': '<i4', 'fortran_order': False, 'shape': (4), }", D16, 1, 0),
 "shape_no_comma": ("{'descr': '<i4', 'fortran_order': False, 'shape': (2 2), }", D16, 1, 0),
 "shape_float": ("{'descr': '<i4', 'fortran_order': False, 'shape': (4.0,), }", D16, 1, 0),
 "shape_double_comma": ("{'descr': '<i4', 'fortran_order': False, 'shape': (4,,), }", D16, 1, 0),
 "shape_list": ("{'descr': '<i4', 'fortran_order': False, 'shape': [4], }", D16, 1, 0),
 "shape_leading_zero": ("{'descr': '<i4', 'fortran_order': False, 'shape': (04,), }", D16, 1, 0),
 "shape_long_v3": ("{'descr': '<i4', 'fortran_order': False, 'shape': (4L,), }", D16, 3, 0),
 "shape_double_long": ("{'descr': '<i4', 'fortran_order': False, 'shape': (4LL,), }", D16, 1, 0),
 "order_int": ("{'descr': '<i4', 'fortran_order': 0, 'shape': (4,), }", D16, 1, 0),
 "order_name": ("{'descr': '<i4', 'fortran_order': Falsey, 'shape': (4,), }", D16, 1, 0),
 "missing_key": ("{'descr': '<i4', 'shape': (4,), }", D16, 1, 0),
 "extra_key": ("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), 'extra': 1, }", D16, 1, 0),
 "no_entry_comma": ("{'descr': '<i4' 'fortran_order': False, 'shape': (4,), }", D16, 1, 0),
 "missing_entry_comma": ("{'descr': '<i4', 'fortran_order': False 'shape': (4,), }", D16, 1, 0),
 "empty_entry": ("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), , }", D16, 1, 0),
 "mismatched_quotes": ("{'descr': \"<i4', 'fortran_order': False, 'shape': (4,), }", D16, 1, 0),
 "adjacent_strings": ("{'descr': '<i4' '<i4', 'fortran_order': False, 'shape': (4,), }", D16, 1, 0),
 "trailing_text": ("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), } x", D16, 1, 0),
 "two_dicts": ("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }{}", D16, 1, 0),
 "not_a_dict": ("['descr', '<i4']", D16, 1, 0),
 "minor_version": ("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", D16, 1, 1),
 "unclosed": ("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), ", D16, 1, 0),
 "huge_header": ("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }" + ' ' * 10050, D16, 2, 0),
 "nul_in_header": ("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }\0", D16, 1, 0),
 # accepted by NumPy, read the same by zarrpp
 "ok_plain": ("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", D16, 1, 0),
 "ok_double_quotes": ('{"descr": "<i4", "fortran_order": False, "shape": (2, 2)}', D16, 1, 0),
 "ok_long_v1": ("{'descr': '<i4', 'fortran_order': False, 'shape': (2L, 2L), }", D16, 1, 0),
 "ok_newlines": ("{'descr': '<i4',\n 'fortran_order': False,\n 'shape': (\n4,\n),\n}", D16, 1, 0),
 "ok_order_first": ("{'shape': (1, 4), 'fortran_order': True, 'descr': '<i4'}", D16, 2, 0),
 "ok_v3": ("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", D16, 3, 0),
 "ok_scalar": ("{'descr': '<i4', 'fortran_order': False, 'shape': (), }", D16[:4], 1, 0),
}
out = sys.argv[1]
for name, (h, d, ma, mi) in cases.items():
    b = npy(h, d, ma, mi)
    try:
        a = np.load(io.BytesIO(b))
        verdict = "ok" if not name.startswith("dup") else "dup"
        shape = a.shape
    except Exception:
        verdict, shape = "bad", None
    expect = "ok" if name.startswith("ok_") else ("dup" if name.startswith("dup") else "bad")
    if verdict != expect:
        print(f"ORACLE MISMATCH {name}: numpy says {verdict} {shape}", file=sys.stderr)
    open(os.path.join(out, f"{verdict}-{name}.npy"), "wb").write(b)
    print(verdict, name, "x".join(map(str, shape)) if shape else "-")
