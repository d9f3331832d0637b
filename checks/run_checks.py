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
全部检查在几个子进程里同时跑（比核数多一个，同样的 Python 和 -W 设置）：每个子进程跑完一个检查模块就领下一个，重的先发，
结果合在一起报告；--documents 只有几项，就在这个进程里跑。检查里运行套件的脚本时，多数在检查自己的进程里运行
（checks/in_process.py：看到的和新进程一样，省了启动 Python 的时间），只有进程才看得到的行为开真的子进程。
环境变量：KIT_CHECK_PROCESSES=1 让每条命令都开真的子进程（CI 在 3.13 上这样跑：两种跑法的结果必须一样）。
内部用的：KIT_CHECK_DOCUMENTS（--documents 经它告诉各项检查）、KIT_CHECK_RUN_DIR（这次运行共用的临时目录，
见 kit_helpers.run_dir）、KIT_CHECK_TIMINGS（bench.py 用：把每项检查的秒数写进这个文件）。
"""
import contextlib
import io
import json
import os
import platform
import signal
import subprocess
import sys
import threading
import time
import unittest
from pathlib import Path

CHECKS_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(CHECKS_DIR))
from kit_helpers import (KIT_PYTHON, borrowed, documents_state, has_terminal, in_ci, parse_tool_options, room_warning, run_dir,
                         run_tool)   # noqa: E402  （也检查 Python 版本）

# 各模块在整套检查里大约要几秒（2 核的机器上量的，bench.py 的 KIT_CHECK_TIMINGS 也能看到）：只用来决定先发哪个，
# 重的先发，最后就不会只剩一个大模块在跑。不准也不要紧，只影响快慢；没列出的算 1 秒
WEIGHTS = {"test_tools.GradeTest": 4.2, "test_grade": 3.0, "test_cli": 2.5, "test_grounding": 2.4, "test_web": 2.3, "test_model": 1.7,
           "test_lessons": 1.6, "test_safety": 1.6, "test_servers": 1.5, "test_in_process": 1.4, "test_tools.SameInAProcessTest": 1.1,
           "test_tools.ExerciseCommandTest": 1.0, "test_tools.ToolShellTest": 0.8, "test_tools.OldPythonTest": 0.7, "test_evidence": 0.6,
           "test_tools.RunChecksCommandTest": 0.6, "test_untrusted": 0.6, "test_loader": 0.4, "test_exercises": 0.3, "test_layout": 0.2,
           "test_lesson_text": 0.1, "test_tools.EvaluateCommandTest": 0.1, "test_tools.AcceptanceTest": 0.1, "test_markdown": 0.1,
           "test_retrieval": 0.1}
# 最重的模块拆成一个个测试类排队：不拆时它一个人从头跑到尾，别的早跑完了
SPLIT = ("test_tools",)
# 关于资料文件本身的检查：--documents 只跑这几项
DATA_CHECKS = ["test_loader.KitDocumentsTest.test_kit_documents_file_is_valid",
               "test_loader.KitDocumentsTest.test_shipped_documents_are_unchanged",
               "test_loader.SampleFileTest", "test_retrieval.SampleQuestionsTest"]
USAGE = "用法：python3 checks/run_checks.py [-v] [--documents PATH]"
# 秒：一个检查模块（或一个测试类）最多跑这么久。平常最慢的也不到 5 秒（第一次量标注集时十来秒）；超过了多半是卡住了，
# 停掉那个子进程、记一次失败，整套检查照样结束，不会在 CI 里一直等下去
MODULE_LIMIT = 300
# 子进程比核数多开几个：有的检查在等（假服务故意不回答、等时限到），多开的那个在它等的时候用上这个核。多开得更多，
# 子进程互相抢核和缓存、多导入一遍检查模块，CPU 时间多了，墙钟却不见快；一个也不多开，等的时候没人用核
EXTRA_WORKERS = 1


class ConciseResult(unittest.TextTestResult):
    """检查没通过（断言不成立）时只打印检查写好的中文原因，不打印 traceback；意外的异常照旧打印 traceback。
    加 -v 时一律打印完整的 traceback。也记下通过了几项，和每项检查花的秒数（bench.py 用它找出最慢的几项）。"""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.passed, self.seconds = 0, {}

    def addSuccess(self, test):
        super().addSuccess(test)
        self.passed += 1

    def _exc_info_to_string(self, err, test):
        if issubclass(err[0], AssertionError) and not self.showAll:
            return str(err[1]) + "\n"
        return super()._exc_info_to_string(err, test)

    def startTest(self, test):
        self.started = time.perf_counter()
        super().startTest(test)

    def stopTest(self, test):
        super().stopTest(test)
        self.seconds[test.id()] = round(time.perf_counter() - self.started, 3)


def run_names(names, verbose):
    """在本进程里跑这些检查（模块名或“模块.类名”），返回 {"counts": [运行数, 失败数, 跳过数], "report": 要打印的文字,
    "seconds": {检查名: 秒}}，运行数 = 通过 + 失败 + 跳过。某个模块连导入都失败时，算一次失败并说明原因，其余照常运行。"""
    suite, broken, report = unittest.TestSuite(), 0, ""
    for name in names:
        try:
            suite.addTest(unittest.defaultTestLoader.loadTestsFromName(name))
        except Exception as error:   # 检查模块自己坏了：说清是哪个，别让整组检查消失
            report += f"检查模块 {name} 无法加载：{error.__class__.__name__}: {error}\n"
            broken += 1
    stream = io.StringIO()
    result = unittest.TextTestRunner(stream=stream, verbosity=2 if verbose else 1, resultclass=ConciseResult).run(suite)
    if verbose:   # -v：unittest 原样逐条报告
        report += stream.getvalue()
    else:   # 平常只报没通过的检查；进度点和“Ran N tests / OK”不打，总数由最后一行统一报告
        text = stream.getvalue()
        first, last = text.find("=" * 70), text.rfind("-" * 70)   # 失败说明夹在这两条分隔线之间
        report += text[first:last] if first >= 0 else ""
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses) + broken
    # 通过数按通过的检查数，不用 testsRun 去减：Python 3.12.1 的 testsRun 不算被跳过的检查（曾报出“-7 passed”），
    # 一项检查里有两个子检查失败时，减出来的通过数也会少算一项
    passed = result.passed + len(result.expectedFailures)
    return {"counts": [passed + failed + len(result.skipped), failed, len(result.skipped)], "report": report,
            "seconds": result.seconds}


def serve_worker(verbose):
    """--worker：从 stdin 一行领一个模块，跑完在 stdout 上写一行 JSON（run_names 的结果），再领下一个；stdin 关了就退出。"""
    # 领活和交结果用 stdin、stdout；检查自己用的 stdin 换成空设备、往 stdout 打印的改到 stderr，不会和这一行行的结果混在一起
    orders, channel = sys.stdin, sys.stdout
    with open(os.devnull, encoding="utf-8") as sys.stdin:
        sys.stdout = sys.stderr
        for line in orders:
            channel.write(json.dumps(run_names([line.strip()], verbose)) + "\n")   # 只用 ASCII：Windows 的管道编码也读得对
            channel.flush()
    return 0


def queue_units(names):
    """排队的单位：多数是整个模块；SPLIT 里的模块拆成它的测试类（用 unittest 自己的加载器列出来，一项也不会漏；
    模块导入不了时照旧整个排进去，由子进程报出导入错误）。"""
    units = []
    for name in names:
        found = []
        if name in SPLIT:
            for group in unittest.defaultTestLoader.loadTestsFromName(name):
                tests = list(group) if isinstance(group, unittest.TestSuite) else [group]
                if tests and type(tests[0]).__module__ == name:
                    found.append(f"{name}.{type(tests[0]).__name__}")
        units += found or [name]
    return units


def run_in_parallel(names, workers, verbose):
    """开 workers 个子进程（同样的 Python 和 -W 设置），谁先空下来谁就领下一个模块：重的先发，不会最后只剩一个核在跑。
    返回 ([运行数, 失败数, 跳过数], {检查名: 秒})。"""
    command = KIT_PYTHON + [str(Path(__file__).resolve()), "--worker"]   # 同样的 Python 和 -W 设置，不加载 site（见 KIT_PYTHON）
    waiting = sorted(names, key=lambda name: -WEIGHTS.get(name, 1))
    totals, seconds, lock, interrupted = [0, 0, 0], {}, threading.Lock(), threading.Event()

    def serve(process):   # 每个子进程一个线程：发一个模块名，等它那一行结果，再发下一个
        killed = threading.Event()

        def stop():   # 到了时限还没交结果：多半卡住了（等一个永远不来的输入），停掉它
            killed.set()
            process.kill()

        while True:
            with lock:
                name = waiting.pop(0) if waiting else None
            if name is None:
                break
            stuck = threading.Timer(MODULE_LIMIT, stop)
            stuck.start()
            try:
                process.stdin.write(name + "\n")
                process.stdin.flush()
                outcome = json.loads(process.stdout.readline())
            except (OSError, ValueError):   # 子进程崩了或被停掉：算作一次失败，说清是哪个模块；别的模块交给别的子进程
                if interrupted.is_set():   # 是按了 Ctrl-C、主进程停掉的：不是失败，什么也不报
                    break
                why = f"超过 {MODULE_LIMIT} 秒还没跑完，停掉了" if killed.is_set() else "没有跑完"
                outcome = {"counts": [1, 1, 0], "seconds": {},
                           "report": f"错误：检查模块 {name} {why}（子进程退出码 {process.wait()}）。\n"}
            finally:
                stuck.cancel()
            with lock:
                sys.stderr.write(outcome["report"])
                totals[:] = [a + b for a, b in zip(totals, outcome["counts"])]
                seconds.update(outcome["seconds"])
            if process.poll() is not None:
                break
        with process:   # 关掉管道（子进程读到 stdin 的结尾就退出），等它退出
            pass

    processes, threads = [], []
    try:
        for _ in range(min(workers, len(names))):
            processes.append(subprocess.Popen(command + (["-v"] if verbose else []), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                              text=True, encoding="utf-8", **worker_group()))
            threads.append(threading.Thread(target=serve, args=(processes[-1],)))
            threads[-1].start()
        for thread in threads:
            thread.join()
    except KeyboardInterrupt:   # Ctrl-C（哪怕子进程才开了一半）：不再发新的模块，停掉子进程（连同它们开的），再让 run_tool 说一句“已中断”、退出码 130
        interrupted.set()
        with lock:
            waiting.clear()
        for process in processes:
            stop_group(process)
        for thread in threads:
            if thread.ident is not None:   # 开始了的线程读到结尾就停
                thread.join()
        for process in processes:   # 关掉管道、收尸：刚开出来、还没有线程管的也关（线程关过的再关一次不要紧）
            with process:
                pass
        raise
    for name in waiting:   # 子进程全都崩了，还有模块没人跑：每个算一次失败，不能当作通过
        sys.stderr.write(f"错误：检查模块 {name} 没有跑（跑检查的子进程都退出了）。\n")
        totals = [totals[0] + 1, totals[1] + 1, totals[2]]
    return totals, seconds


def worker_group():
    """开跑检查的子进程时怎么分组：和检查开子进程是同一条规则（kit_helpers.has_terminal），有终端才自成一个会话
    （Windows 上总是自成一个进程组）。这样终端里按 Ctrl-C 只送到主进程，由它停掉子进程、只说一句“已中断”；要是子进程
    也收到，正跑着的检查会被打断，报出一串并没有坏的“失败”和 traceback。"""
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": has_terminal()}


def stop_group(process):
    """停掉一个跑检查的子进程。它自成一组时（worker_group），连同它开的进程（都在这一组里）一起停掉。"""
    try:
        if sys.platform != "win32" and os.getpgid(process.pid) == process.pid:
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    except OSError:   # 已经退出了
        pass


def student_file(given):
    """这次要检查的学生资料文件：--documents 给的那个（绝对路径，但不跟着链接走：开头说的是老师给的文件，链接要点名，
    和 exercise.py 一样），没给时是 None（检查套件自己的）。各项检查经环境变量 KIT_CHECK_DOCUMENTS 知道是哪个
    （kit_helpers.student_documents）；没给 --documents 时去掉 shell 里残留的：留着它会让 CI=true 的运行也悄悄跳过几项。"""
    if not given:
        os.environ.pop("KIT_CHECK_DOCUMENTS", None)
        return None
    path = Path(os.path.abspath(given))
    os.environ["KIT_CHECK_DOCUMENTS"] = str(path)
    return path


def main(argv):
    options = parse_tool_options(argv, USAGE, __doc__, flags=("-v", "--verbose", "--worker"), values=("--documents",),
                                 positionals=100)
    verbose = options["-v"] or options["--verbose"]
    if options["--worker"]:   # 由 run_in_parallel 启动
        return serve_worker(verbose)
    if options["args"]:
        print(f"错误：多了一个参数 {options['args'][0]}。{USAGE}；详见 --help。", file=sys.stderr)
        return 2
    documents = student_file(options["--documents"])
    shown = documents or CHECKS_DIR.parent / "retrieval_documents.json"
    state = documents_state(shown)
    warnings = " ".join(f"-W {option}" for option in sys.warnoptions) or "默认"
    print(f"Python {platform.python_version()}，警告设置：{warnings}", file=sys.stderr)
    if state is None:
        print(f"资料文件 {shown}：和发布版相同。", file=sys.stderr)
    else:
        consequence = ("CI 里资料文件必须是发布版" if in_ci() else
                       "比对发布版内容的几项检查跳过" if documents else "只有关于资料文件本身的几项检查会跳过")
        print(f"资料文件 {shown}：和发布版不同（{state}）；{consequence}。", file=sys.stderr)
    try:
        scratch = run_dir()   # 各组检查共用一个临时目录（经环境变量 KIT_CHECK_RUN_DIR）：测量的锁，有它才共用量过的结果
    except OSError as error:   # 磁盘满了、临时目录都不能写：检查没法跑，说清楚，不打印 traceback
        from model_reply_assistant import describe_os_error
        # Python 一个能写的临时目录都找不到时报的是 FileNotFoundError（英文说“没有可用的临时目录”），不是“文件夹不存在”
        why = "试过的临时目录都写不进去" if isinstance(error, FileNotFoundError) else describe_os_error(error, writing=True)
        print(f"错误：建不了这次运行的临时目录（{why}），检查没有跑。多半是磁盘满了，或者临时目录不能写："
              "清出一些空间（或把 TMPDIR 设成一个能写的文件夹）再运行。", file=sys.stderr)
        return 1
    names = DATA_CHECKS if documents else sorted(path.stem for path in CHECKS_DIR.glob("test_*.py"))
    if documents:   # 老师只判这份文件：说清跑哪几项、其余为什么不跑
        print(f"只跑关于这份资料文件的 {len(names)} 组检查：{'、'.join(names)}；程序行为的检查用套件自带的资料，"
              "和学生的文件无关，这里不跑（不加 --documents 就全跑）。和发布版不同时，比对发布版内容的几项跳过（加 -v 逐项列出）。",
              file=sys.stderr)
        # 只有几项：就在这个进程里跑（老师一个个判全班的文件时，每份省下再开一个 Python 的时间）
        print("正在运行检查，下面只列出没通过的……", file=sys.stderr)
        with contextlib.redirect_stdout(sys.stderr):   # 检查往 stdout 打印的，和子进程里一样改到 stderr
            outcome = run_names(names, verbose)
        sys.stderr.write(outcome["report"])
        (run, failed, skipped), seconds = outcome["counts"], outcome["seconds"]
    else:
        warning = room_warning(scratch)
        if warning:
            print(warning, file=sys.stderr)
        workers = (os.cpu_count() or 1) + EXTRA_WORKERS
        print(f"正在运行检查（{workers} 个子进程同时跑），下面只列出没通过的……", file=sys.stderr)
        (run, failed, skipped), seconds = run_in_parallel(queue_units(names), workers, verbose)
    if os.environ.get("KIT_CHECK_TIMINGS"):   # bench.py 要每项检查的秒数
        Path(os.environ["KIT_CHECK_TIMINGS"]).write_text(json.dumps(seconds, ensure_ascii=False), encoding="utf-8")
    reason = borrowed(documents) if documents else None
    if reason:   # 和 grade.py、exercise.py 一样：链接过去的资料是别人的，不是这个学生的证据
        from model_reply_assistant import one_line   # 链接里写的路径是学生给的：转义了再显示
        print(f"资料文件 {one_line(options['--documents'])} {one_line(reason)}：不算本人的资料，练习不判。", file=sys.stderr)
    elif documents:   # 老师检查学生的文件：再用老师手里的 exercise.py 看练习做到哪一步
        import exercise
        exercise.main(["all", "--documents", str(documents)])
    print(f"checks: {run - failed - skipped} passed, {failed} failed, {skipped} skipped")
    return 0 if failed == 0 and run > 0 else 1


if __name__ == "__main__":
    sys.exit(run_tool(main))
