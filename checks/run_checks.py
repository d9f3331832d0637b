"""一条命令跑完套件的全部离线检查（不联网、不需要密钥、只写临时目录）。

    $ python -W error checks/run_checks.py        # 加 -v 可逐条列出检查名

从任何目录运行都可以。最后一行形如 “checks: 200 passed, 0 failed, 1 skipped”；有失败时退出码为 1。
机器有多个核时，检查分成两组在两个子进程里同时跑（各组用同样的 Python 和 -W 设置），结果合在一起报告。
"""
import json
import os
import platform
import subprocess
import sys
import unittest
from pathlib import Path

CHECKS_DIR = Path(__file__).resolve().parent
# 大致的耗时（秒），只用来把检查分成差不多重的两组；不准也不要紧，只影响快慢
WEIGHTS = {"test_lessons": 5, "test_model": 4, "test_tools": 4, "test_grounding": 3, "test_untrusted": 2, "test_cli": 3,
           "test_servers": 3}


def run_modules(names, verbose):
    """在本进程里跑这些检查模块，返回 (运行数, 失败数, 跳过数)。"""
    loader = unittest.defaultTestLoader
    if str(CHECKS_DIR) not in sys.path:
        sys.path.insert(0, str(CHECKS_DIR))
    suite = unittest.TestSuite(loader.loadTestsFromName(name) for name in names)
    result = unittest.TextTestRunner(verbosity=2 if verbose else 1).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    return result.testsRun, failed, len(result.skipped)


def split(names, parts):
    """按估计的耗时把模块分成 parts 组，每次放进目前最轻的那一组。"""
    groups = [[] for _ in range(parts)]
    for name in sorted(names, key=lambda n: -WEIGHTS.get(n, 1)):
        min(groups, key=lambda g: sum(WEIGHTS.get(n, 1) for n in g)).append(name)
    return [group for group in groups if group]


def run_in_parallel(groups, verbose):
    command = [sys.executable] + [f"-W{option}" for option in sys.warnoptions] + [str(Path(__file__).resolve())]
    workers = [subprocess.Popen(command + ["--worker"] + (["-v"] if verbose else []) + group, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE) for group in groups]
    totals = [0, 0, 0]
    for worker in workers:
        out, err = worker.communicate()
        sys.stderr.write(err.decode("utf-8", errors="replace"))
        try:
            counts = json.loads(out.decode("utf-8").strip().splitlines()[-1])
        except (ValueError, IndexError):   # 子进程自己崩了：算作一次失败，输出已经在上面
            counts = [1, 1, 0]
        totals = [a + b for a, b in zip(totals, counts)]
    return totals


def main(argv):
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(encoding="utf-8", errors="replace")
    verbose = "-v" in argv
    if "--worker" in argv:   # 由下面的并行模式启动：只跑指定的模块，把计数写到 stdout
        names = [arg for arg in argv if not arg.startswith("-")]
        print(json.dumps(run_modules(names, verbose)))
        return 0
    warnings = " ".join(f"-W {option}" for option in sys.warnoptions) or "默认"
    print(f"Python {platform.python_version()}，警告设置：{warnings}", file=sys.stderr)
    names = sorted(path.stem for path in CHECKS_DIR.glob("test_*.py"))
    parts = 2 if (os.cpu_count() or 1) > 1 else 1
    if parts > 1:
        run, failed, skipped = run_in_parallel(split(names, parts), verbose)
    else:
        run, failed, skipped = run_modules(names, verbose)
    from kit_helpers import DOCUMENTS_EDITED, EDITED_REASON, IN_CI
    if DOCUMENTS_EDITED:
        print(f"注意：{EDITED_REASON}。" if not IN_CI else "注意：CI 里资料文件必须是发布版。", file=sys.stderr)
    print(f"checks: {run - failed - skipped} passed, {failed} failed, {skipped} skipped")
    return 0 if failed == 0 and run > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
