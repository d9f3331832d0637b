"""一条命令跑完套件的全部离线检查（不联网、不需要密钥、只写临时目录）。

    $ python -W error checks/run_checks.py        # 加 -v 可逐条列出检查名

从任何目录运行都可以。最后一行形如 “checks: 80 passed, 0 failed, 1 skipped”；有失败时退出码为 1。
"""
import platform
import sys
import unittest
from pathlib import Path

CHECKS_DIR = Path(__file__).resolve().parent


def main(argv):
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(encoding="utf-8", errors="replace")
    warnings = " ".join(f"-W {option}" for option in sys.warnoptions) or "默认"
    print(f"Python {platform.python_version()}，警告设置：{warnings}", file=sys.stderr)
    suite = unittest.defaultTestLoader.discover(str(CHECKS_DIR), top_level_dir=str(CHECKS_DIR))
    result = unittest.TextTestRunner(verbosity=2 if "-v" in argv else 1).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    from kit_helpers import DOCUMENTS_EDITED, EDITED_REASON, IN_CI
    if DOCUMENTS_EDITED:
        print(f"注意：{EDITED_REASON}。" if not IN_CI else "注意：CI 里资料文件必须是发布版。", file=sys.stderr)
    print(f"checks: {result.testsRun - failed - skipped} passed, {failed} failed, {skipped} skipped")
    return 0 if result.wasSuccessful() and result.testsRun > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
