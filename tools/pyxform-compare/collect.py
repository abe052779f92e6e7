"""Writes the forms that pyxform's own source tests, and pyxform's conversion of each.

Run with Debian's python3 (python3-openpyxl, python3-xlrd, python3-defusedxml, python3-lark)
from a pyxform source tree; used by `pnpm xlsform:compare` (docs/xlsform.md, "Parity with
pyxform"). For every case it writes NAME.xlsx and NAME.pyxform.json ({"ok": true, "xml": ...}
or {"ok": false, "error": ...}):
  pyxform-files/  the .xlsx and .xls workbooks of pyxform's tests (.xls rows copied to .xlsx)
  pyxform-md/     every markdown table (and ss_structure dict) its test suite converts, written
                  to .xlsx with pyxform's own md_table_to_workbook
  realworld/      (with --realworld DIR) the .xlsx files of DIR/forms
Usage: python3 collect.py PYXFORM_SRC OUT_DIR [--realworld DIR]
"""

import hashlib
import io
import json
import os
import sys
import unittest
import warnings as pywarnings
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path


def main():
    src = Path(sys.argv[1]).resolve()
    out = Path(sys.argv[2]).resolve()
    realworld = Path(sys.argv[sys.argv.index("--realworld") + 1]) if "--realworld" in sys.argv else None
    sys.path.insert(0, str(src))
    os.chdir(src)
    import openpyxl
    import xlrd
    from pyxform.xls2json_backends import md_table_to_workbook
    from pyxform.xls2xform import convert

    def pyxform_result(path: Path):
        try:
            with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
                result = convert(xlsform=str(path), validate=False, pretty_print=False, warnings=[])
            return {"ok": True, "xml": result.xform}
        except Exception as err:  # pyxform's refusals and its own failures alike
            return {"ok": False, "error": str(err), "kind": type(err).__name__}

    def write_case(folder: Path, name: str, save):
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}.xlsx"
        save(path)
        (folder / f"{name}.pyxform.json").write_text(json.dumps(pyxform_result(path)))

    # 1. Workbooks on disk.
    for f in sorted(list((src / "tests").rglob("*.xlsx")) + list((src / "tests").rglob("*.xls"))):
        name = f.stem if f.suffix == ".xlsx" else f"{f.stem}_xls"
        if f.suffix == ".xlsx":
            write_case(out / "pyxform-files", name, lambda p, f=f: p.write_bytes(f.read_bytes()))
        else:
            def copy_xls(p, f=f):
                book = xlrd.open_workbook(str(f))
                wb = openpyxl.Workbook()
                wb.remove(wb.active)
                for sheet in book.sheets():
                    ws = wb.create_sheet(sheet.name)
                    for r in range(sheet.nrows):
                        row = []
                        for c in range(sheet.ncols):
                            cell = sheet.cell(r, c)
                            if cell.ctype == xlrd.XL_CELL_DATE:
                                row.append(xlrd.xldate.xldate_as_datetime(cell.value, book.datemode))
                            elif cell.ctype == xlrd.XL_CELL_BOOLEAN:
                                row.append(bool(cell.value))
                            elif cell.ctype in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
                                row.append(None)
                            else:
                                row.append(cell.value)
                        ws.append(row)
                wb.save(str(p))
            try:
                write_case(out / "pyxform-files", name, copy_xls)
            except Exception as err:
                print(f"skipped {f}: {err}", file=sys.stderr)

    # 2. The markdown tables of the test suite: record what each test hands to assertPyxformXform.
    import tests.pyxform_test_case as ptc

    seen = {}

    def record(self, md=None, ss_structure=None, survey=None, **kwargs):
        if md is not None:
            seen.setdefault(hashlib.sha1(md.encode()).hexdigest()[:12], ("md", md))
        elif ss_structure is not None:
            key = hashlib.sha1(repr(ss_structure).encode()).hexdigest()[:12]
            seen.setdefault(key, ("ss", ss_structure))
        return None

    ptc.PyxformTestCase.assertPyxformXform = record
    suite = unittest.defaultTestLoader.discover(str(src / "tests"), top_level_dir=str(src))
    with pywarnings.catch_warnings(), redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        pywarnings.simplefilter("ignore")
        unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)

    def save_ss(p, ss):
        wb = openpyxl.Workbook()
        wb.remove(wb.active)
        for sheet, rows in ss.items():
            ws = wb.create_sheet(sheet)
            headers = []
            for row in rows:
                for k in row:
                    if k not in headers:
                        headers.append(k)
            ws.append(headers)
            for row in rows:
                ws.append([row.get(h) for h in headers])
        wb.save(str(p))

    for key, (kind, data) in sorted(seen.items()):
        try:
            if kind == "md":
                write_case(out / "pyxform-md", f"md_{key}", lambda p, d=data: md_table_to_workbook(d).save(str(p)))
            else:
                write_case(out / "pyxform-md", f"ss_{key}", lambda p, d=data: save_ss(p, d))
        except Exception as err:
            print(f"skipped {kind} {key}: {err}", file=sys.stderr)

    # 3. Real-world forms.
    if realworld:
        for f in sorted((realworld / "forms").glob("*.xlsx")):
            write_case(out / "realworld", f.stem, lambda p, f=f: p.write_bytes(f.read_bytes()))
    print(f"cases written to {out}")


if __name__ == "__main__":
    main()
