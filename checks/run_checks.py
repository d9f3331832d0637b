"""一条命令跑完套件的全部离线检查（不联网、不需要密钥、只写临时目录）。

    $ python3 -W error checks/run_checks.py                  # 全部检查
    $ python3 checks/run_checks.py --documents 学生的.json    # 老师用：只检查一份学生的资料文件，再给练习打勾

从任何目录运行都可以。最后一行形如 “checks: 200 passed, 0 failed, 1 skipped”；有失败时退出码为 1，用法错误为 2。

  -v, --verbose      逐条列出检查名；失败时打印完整的 traceback
  --documents PATH   不跑全部检查，只跑“关于资料文件”的几项（能不能读、样例问题命中什么），对象换成 PATH；
                     再用 checks/exercise.py all 判一遍练习。代码和其他检查用的都是这份套件自己的（老师手里可信的那份）
  -h, --help         显示这段说明

程序行为的检查（模型调用、拒绝规则、命令行约定、出处核对、课文记录……）都在发布版资料的副本
checks/shipped_documents.json 上跑，学生改 retrieval_documents.json 不会让它们跳过或失败。
只有关于资料文件本身的几项读学生的文件；文件和发布版不同时，开头会说明哪里不同、像是哪个练习。
机器有多个核时，检查分成四组在四个子进程里同时跑（同样的 Python 和 -W 设置），结果合在一起报告。
内部用的环境变量：KIT_CHECK_DOCUMENTS（--documents 经它传给子进程）、KIT_CHECK_PYCACHE（共用的字节码缓存目录）。
"""
import io
import json
import os
import platform
import subprocess
import sys
import unittest
from pathlib import Path

CHECKS_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(CHECKS_DIR))
from kit_helpers import IN_CI, documents_state, parse_tool_options, pycache_dir, run_tool   # noqa: E402  （也检查 Python 版本）

# 各模块单独跑的耗时（秒，2026-11-30 在 2 核的开发机上量的），只用来把检查分成差不多重的几组；不准也不要紧，只影响快慢
WEIGHTS = {"test_tools": 4.1, "test_lessons": 6.8, "test_cli": 2.3, "test_servers": 2.1, "test_model": 2.5,
           "test_loader": 0.7, "test_exercises": 0.4, "test_grounding": 5.9, "test_untrusted": 0.6, "test_retrieval": 0.1,
           "test_evidence": 3.5, "test_web": 1.5}
# 关于资料文件本身的检查：--documents 只跑这几项
DATA_CHECKS = ["test_loader.KitDocumentsTest.test_kit_documents_file_is_valid",
               "test_loader.KitDocumentsTest.test_shipped_documents_are_unchanged",
               "test_loader.SampleFileTest", "test_retrieval.SampleQuestionsTest"]
USAGE = "用法：python3 checks/run_checks.py [-v] [--documents PATH]；详见 --help。"


class ConciseResult(unittest.TextTestResult):
    """检查没通过（断言不成立）时只打印检查写好的中文原因，不打印 traceback；意外的异常照旧打印 traceback。
    加 -v 时一律打印完整的 traceback。"""

    def _exc_info_to_string(self, err, test):
        if issubclass(err[0], AssertionError) and not self.showAll:
            return str(err[1]) + "\n"
        return super()._exc_info_to_string(err, test)


def run_names(names, verbose):
    """在本进程里跑这些检查（模块名或“模块.类名”），返回 [运行数, 失败数, 跳过数]。
    某个模块连导入都失败时，算一次失败并打印原因，其余照常运行。"""
    suite, broken = unittest.TestSuite(), 0
    for name in names:
        try:
            suite.addTest(unittest.defaultTestLoader.loadTestsFromName(name))
        except Exception as error:   # 检查模块自己坏了：说清是哪个，别让整组检查消失
            print(f"检查模块 {name} 无法加载：{error.__class__.__name__}: {error}", file=sys.stderr)
            broken += 1
    if verbose:   # -v：unittest 原样逐条报告
        result = unittest.TextTestRunner(verbosity=2, resultclass=ConciseResult).run(suite)
    else:   # 平常只报没通过的检查；几组的进度点和“Ran N tests / OK”不再各打一遍，总数由最后一行统一报告
        stream = io.StringIO()
        result = unittest.TextTestRunner(stream=stream, resultclass=ConciseResult).run(suite)
        report = stream.getvalue()
        first, last = report.find("=" * 70), report.rfind("-" * 70)   # 失败说明夹在这两条分隔线之间
        sys.stderr.write(report[first:last] if first >= 0 else "")
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses) + broken
    return [result.testsRun + broken, failed, len(result.skipped)]


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
    for worker, group in zip(workers, groups):
        out, err = worker.communicate()
        sys.stderr.write(err.decode("utf-8", errors="replace"))
        try:
            counts = json.loads(out.decode("utf-8").strip().splitlines()[-1])
        except (ValueError, IndexError):   # 子进程自己崩了：算作一次失败，并说清是哪一组
            print(f"错误：这一组检查没有跑完（子进程退出码 {worker.returncode}）：{'、'.join(group)}", file=sys.stderr)
            counts = [1, 1, 0]
        totals = [a + b for a, b in zip(totals, counts)]
    return totals


def main(argv):
    options = parse_tool_options(argv, USAGE, __doc__, flags=("-v", "--verbose", "--worker"), values=("--documents",),
                                 positionals=100)
    verbose = options["-v"] or options["--verbose"]
    if options["--worker"]:   # 由下面的 run_in_parallel 启动：只跑指定的检查，把计数写到 stdout
        print(json.dumps(run_names(options["args"], verbose)))
        return 0
    if options["args"]:
        print(f"错误：多了一个参数 {options['args'][0]}。{USAGE}", file=sys.stderr)
        return 2
    documents = Path(options["--documents"]).resolve() if options["--documents"] else None
    if documents:   # 子进程（跑检查的那些）从这个环境变量知道要检查哪个资料文件
        os.environ["KIT_CHECK_DOCUMENTS"] = str(documents)
    shown = documents or CHECKS_DIR.parent / "retrieval_documents.json"
    state = documents_state(shown)
    warnings = " ".join(f"-W {option}" for option in sys.warnoptions) or "默认"
    print(f"Python {platform.python_version()}，警告设置：{warnings}", file=sys.stderr)
    if state is None:
        print(f"资料文件 {shown}：和发布版相同。", file=sys.stderr)
    else:
        consequence = ("CI 里资料文件必须是发布版" if IN_CI else
                       "比对发布版内容的几项检查跳过" if documents else "只有关于资料文件本身的几项检查会跳过")
        print(f"资料文件 {shown}：和发布版不同（{state}）；{consequence}。", file=sys.stderr)
    os.environ["KIT_CHECK_PYCACHE"] = pycache_dir()   # 各组检查的子进程共用一份字节码缓存
    names = DATA_CHECKS if documents else sorted(path.stem for path in CHECKS_DIR.glob("test_*.py"))
    if documents:   # 老师只判这份文件：说清跑哪几项、其余为什么不跑
        print(f"只跑关于这份资料文件的 {len(names)} 项检查：{'、'.join(names)}；程序行为的检查用套件自带的资料，"
              "和学生的文件无关，这里不跑（不加 --documents 就全跑）。和发布版不同时，比对发布版内容的几项会写明跳过。", file=sys.stderr)
    # 检查大多在等子进程（启动 Python、等假服务）；分成四组同时跑，两个核都不闲着，最后也不会只剩一组在跑
    parts = 4 if (os.cpu_count() or 1) > 1 and not documents else 1
    print(f"正在运行检查（分 {parts} 组同时跑），下面只列出没通过的……", file=sys.stderr)
    run, failed, skipped = run_in_parallel(split(names, parts), verbose)   # 检查总在子进程里跑，用的是同一份环境变量
    linked = documents and (Path(options["--documents"]).is_symlink() or (documents.exists() and os.stat(documents).st_nlink > 1))
    if linked:   # 和 grade.py 一样：链接过去的资料是别人的，不是这个学生的证据
        print(f"资料文件 {options['--documents']} 是链接（符号链接或硬链接）：不算本人的资料，练习不判。", file=sys.stderr)
    elif documents:   # 老师检查学生的文件：再看练习做到哪一步
        sys.stdout.flush()
        subprocess.run([sys.executable, str(CHECKS_DIR / "exercise.py"), "all", "--documents", str(documents)])
    print(f"checks: {run - failed - skipped} passed, {failed} failed, {skipped} skipped")
    return 0 if failed == 0 and run > 0 else 1


if __name__ == "__main__":
    sys.exit(run_tool(main))
