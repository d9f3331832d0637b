"""课文记录的执行器：把 lessons/*.md 和 README.md 里的每个 ```console 块真的跑一遍，输出必须与课文一致。

    $ python3 checks/transcripts.py                    # 检查全部课文
    $ python3 checks/transcripts.py lessons/03-retrieval-qa.md

课文里的写法（都在套件的临时副本里执行，不碰你的文件）：
- ```console 块：`$ ` 开头的行是命令，其后到下一个 `$ ` 之前的行是期望输出（stdout 与 stderr 合在一起，
  和终端里看到的一样）。期望输出最后一行若是 `[N]`，还要求退出码为 N。
  命令只支持 python（或 python3、py）、`echo 文字 | python …` 这样的管道，以及 `变量=值 python …` 这样临时设置环境变量
  （这是 macOS/Linux 的写法，课文里要另外给出 Windows 的写法）。命令在新的会话里运行，没有可以输入密钥的终端。
  期望输出里若有以“问题：”开头的行，而命令没有用 echo 提供输入，就把这行“问题：”后面的文字当作键盘输入。
- ```json file=NAME 块：把块的内容原样写进文件 NAME。
- ```json edit=FILE 块：块里是一条记录，替换 FILE 中 id 相同的那条（没有就加到末尾）。
- ```json remove=FILE 块：删除 FILE 中与块里记录 id 相同的那条。
- <!-- transcript: backup -->：记下套件此刻的样子（课文里“先备份”的那一步）。
- <!-- transcript: restore -->：恢复到上一次 backup 的样子；之前没有 backup 就恢复成套件原样。
- <!-- transcript: search-server bocha -->：在 127.0.0.1 上开一个假搜索接口（checks/stand_in_search.py，这家的格式），
  之后的命令都带着 SEARCH_PROVIDER 和 SEARCH_API_URL（第 07 课让学生在另一个终端里开它）。端口每次不同，课文的输出里不出现它。
- ```python from=FILE 块：课文里摘录的代码，必须在 FILE 里原样出现（连续的几行，缩进也一样）：课文和代码不会走样。
- 普通的 ```json 块若是一条带 id 和 keywords 的记录，它必须和那一刻资料文件里的同一条记录完全一样，
  remove= 块写出了整条记录时也一样：课文里展示的资料不能和文件走样。
比较时只统一换行符、去掉行尾空白；唯一的例外是 --trace 行里的耗时（“[trace] 资料  1.5 ms”里的 1.5），
它每次运行都不同，比较时当作相同。其余文字，包括 trace 行的其他部分，都逐字比较。
"""
import atexit
import difflib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from in_process import run_script
from kit_helpers import (ALL_IN_PROCESSES, KIT_PYTHON, ROOT, SHIPPED_DOCUMENTS, as_committed, clean_env, has_terminal, parse_tool_options, restore, run_tool,
                         snapshot)

PROMPT = "问题："
FENCE = re.compile(r"^```(\S*)(.*)$")
DIRECTIVES = {"<!-- transcript: backup -->": "backup", "<!-- transcript: restore -->": "restore"}
SEARCH_SERVER = re.compile(r"^<!-- transcript: search-server (\w+) -->$")
EXIT_LINE = re.compile(r"^\[(\d+)\]$")
TRACE_TIME = re.compile(r"^(\[trace\] \S+  )\d+(?:\.\d+)? ms(?=  )")


def default_documents():
    return sorted((ROOT / "lessons").glob("*.md")) + [ROOT / "README.md"]


def parse_markdown(path):
    """把一篇课文拆成按顺序执行的步骤：("run", 行号, 命令, 期望行)、
    ("file"/"edit"/"remove"/"listing", 行号, 文件名, 内容)、("backup"/"restore", 行号)。"""
    steps, block, start, kind, argument = [], None, 0, None, None
    for number, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), start=1):
        if block is None:
            match = FENCE.match(line)
            if line.strip() in DIRECTIVES:
                steps.append((DIRECTIVES[line.strip()], number))
            elif SEARCH_SERVER.match(line.strip()):
                steps.append(("search-server", number, SEARCH_SERVER.match(line.strip()).group(1)))
            elif match:
                block, start = [], number
                kind, argument = block_kind(match.group(1), match.group(2))
        elif line.startswith("```"):
            if kind == "console":
                steps.extend(console_steps(block, start))
            elif kind:
                steps.append((kind, start, argument, "\n".join(text for _, text in block) + "\n"))
            block = None
        else:
            block.append((number, line))
    return steps


def block_kind(language, info):
    if language == "console":
        return "console", None
    if language == "json" and not info.strip():
        return "listing", "retrieval_documents.json"
    for word in info.split():
        name, _, value = word.partition("=")
        if name in ("file", "edit", "remove") and value and language == "json":
            return name, value
        if name == "from" and value and language == "python":
            return "excerpt", value
    return None, None


def console_steps(block, start):
    steps = []
    for number, line in block:
        if line.startswith("$ "):
            steps.append(["run", number, line[2:], []])
        elif steps:
            steps[-1][3].append(line)
    return [tuple(step) for step in steps]


# ---------- 执行 ----------

def make_copy(directory):
    """把套件（不含 .git）复制到临时目录，课文在这里执行。资料文件换成发布版的副本：课文记录的是发布版资料上的输出，
    学生改没改资料、文件是不是 CRLF 换行或带 BOM（Windows 上常见），都不影响这里。"""
    kit = Path(directory) / "kit"
    # 学生的资料文件不复制（下面换成发布版；它可能是命名管道，复制会卡住或出错）
    shutil.copytree(ROOT, kit, ignore=shutil.ignore_patterns(".git", "__pycache__", ".exercise-progress.json",
                                                             "retrieval_documents.json"))
    # 学生的编辑器可能把副本存成了 CRLF、加了 BOM：课文里的字节数（--trace）按发布时的 LF、无 BOM 记
    kit.joinpath("retrieval_documents.json").write_bytes(
        as_committed(SHIPPED_DOCUMENTS.read_bytes()))
    return kit


_copies = {}   # 每个进程一份原样的副本：{(套件, 发布版资料): (副本, 原样)}


def fresh_copy():
    """一份原样的套件副本，返回 (副本, 原样)。同一个进程里一篇篇课文共用它：每篇开始前用 restore 改回原样，
    和新复制的一份一样（多出来的文件都删掉，改过的都写回），只是不必每篇都把五十多个文件重新复制一遍。"""
    key = (ROOT, SHIPPED_DOCUMENTS)
    if key in _copies:
        kit, pristine = _copies[key]
        try:
            restore(kit, pristine)
            return kit, pristine
        except OSError:   # 改不回去（上一篇出错时留下了删不掉的东西）：另复制一份
            pass
    directory = tempfile.TemporaryDirectory()
    atexit.register(directory.cleanup)   # 进程结束时删掉
    kit = make_copy(directory.name)
    _copies[key] = (kit, snapshot(kit))
    return _copies[key]


def split_pipeline(command):
    lexer = shlex.shlex(command, posix=True, punctuation_chars="|")
    lexer.whitespace_split = True
    segments = [[]]
    for token in lexer:
        if token == "|":
            segments.append([])
        else:
            segments[-1].append(token)
    return segments


def run_command(command, expected, kit, extra_env=None, processes=False):
    """执行一条课文命令，返回 (终端上看到的文字, 退出码)。extra_env：课文开的假搜索接口的地址。
    套件的脚本默认在本进程里运行（看到的和子进程一样，省了启动）；processes=True 或环境变量 KIT_CHECK_PROCESSES=1 时
    每条都开真的子进程。"""
    env = clean_env(**(extra_env or {}))
    segments = split_pipeline(command)
    typed = next((line[len(PROMPT):] + "\n" for line in expected if line.startswith(PROMPT)), "")
    data, shown, code = typed.encode("utf-8"), b"", 0
    for index, words in enumerate(segments):
        last = index == len(segments) - 1
        while words and "=" in words[0] and words[0].split("=", 1)[0].isidentifier():
            name, _, value = words.pop(0).partition("=")
            env[name] = value
        if words and words[0] == "echo":
            data, code = (" ".join(words[1:]) + "\n").encode("utf-8"), 0
            if last:
                shown += data
            continue
        if not words or words[0] not in ("python", "python3", "py"):
            raise ValueError(f"课文命令只支持 python（python3、py）和 echo：{command}")
        if len(words) > 1 and words[1].endswith(".py") and not (processes or ALL_IN_PROCESSES):   # 套件的脚本：在本进程里运行，看到的和子进程一样（checks/in_process.py）
            code, out, err = run_script(kit / words[1], words[2:], data, cwd=kit, env=env, merge_stderr=last)
        else:   # python -c …、python -m …：开一个真的子进程
            done = subprocess.run(KIT_PYTHON + words[1:], input=data, cwd=kit, env=env, timeout=60,
                                  start_new_session=has_terminal(), stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT if last else subprocess.PIPE)
            code, out, err = done.returncode, done.stdout, done.stderr
        if last:
            shown += out
        else:
            shown, data = shown + err, out
    return shown.decode("utf-8", errors="replace"), code


def apply_edit(kind, argument, content, kit):
    """执行一个文件步骤；课文展示的记录和文件不一致时返回说明，否则返回 None。"""
    target = kit / argument
    if kind == "excerpt":
        if content not in target.read_text(encoding="utf-8-sig"):
            return f"课文摘录的代码在 {argument} 里找不到（代码改了，课文要跟着改）"
        return None
    if kind == "file":
        target.write_text(content, encoding="utf-8", newline="\n")
        return None
    record = json.loads(content)
    if kind == "listing" and not (isinstance(record, dict) and "id" in record and "keywords" in record):
        return None
    records = json.loads(target.read_text(encoding="utf-8-sig"))
    index = next((i for i, item in enumerate(records) if item.get("id") == record["id"]), None)
    if kind in ("listing", "remove") and len(record) > 1 and (index is None or records[index] != record):
        return f"课文展示的记录 {record['id']} 和此时 {argument} 里的不一样"
    if kind == "listing":
        return None
    if kind == "remove":
        if index is None:
            return f"{argument} 里没有 id 为 {record['id']} 的记录可删"
        del records[index]
    elif index is None:
        records.append(record)
    else:
        records[index] = record
    target.write_text(json.dumps(records, ensure_ascii=False, indent=2) + "\n", encoding="utf-8", newline="\n")
    return None


def normalise(lines):
    lines = [TRACE_TIME.sub(r"\1… ms", line.rstrip()) for line in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def check_markdown(path, label=None, processes=False):
    """执行一篇课文的全部步骤，返回失败说明的列表（空列表表示全部一致）和执行的命令数。
    processes=True：每条命令都开真的子进程（见 run_command）。"""
    import contextlib
    from stand_in_search import StandInSearch
    label = label or path.name
    failures, commands, extra_env = [], 0, {}
    with contextlib.ExitStack() as servers:
        kit, backup = fresh_copy()   # 还没有 backup 时，restore 就恢复成套件原样
        for step in parse_markdown(path):
            if step[0] == "backup":
                backup = snapshot(kit)
            elif step[0] == "restore":
                restore(kit, backup)
            elif step[0] == "search-server":
                server = servers.enter_context(StandInSearch(step[2]))
                extra_env = {"SEARCH_PROVIDER": step[2], "SEARCH_API_URL": server.url}
            elif step[0] == "run":
                _, number, command, expected = step
                commands += 1
                failure = compare(command, expected, kit, extra_env, processes)
                if failure:
                    failures.append(f"{label}:{number}: `{command}` 的输出和文档里写的不一致\n{failure}")
            else:
                problem = apply_edit(step[0], step[2], step[3], kit)
                if problem:
                    failures.append(f"{label}:{step[1]}: {problem}")
    return failures, commands


def compare(command, expected, kit, extra_env=None, processes=False):
    expected = normalise(expected)
    want_code = None
    if expected and EXIT_LINE.match(expected[-1]):
        want_code = int(EXIT_LINE.match(expected[-1]).group(1))
        expected = normalise(expected[:-1])
    shown, code = run_command(command, expected, kit, extra_env, processes)
    actual = normalise(shown.replace("\r\n", "\n").split("\n"))
    if actual != expected:
        return "\n".join(difflib.unified_diff(expected, actual, "课文", "实际输出", lineterm=""))
    if want_code is not None and code != want_code:
        return f"退出码应当是 {want_code}，实际是 {code}"
    return None


def main(argv):
    options = parse_tool_options(argv, "用法：python3 checks/transcripts.py [课文文件 …]", __doc__, positionals=100)
    paths = [Path(arg).resolve() for arg in options["args"]] or default_documents()
    missing = [str(path) for path in paths if not path.is_file()]
    if missing:
        print(f"错误：找不到课文文件 {'、'.join(missing)}。", file=sys.stderr)
        return 2
    total = 0
    all_failures = []
    for path in paths:
        failures, commands = check_markdown(path, os.path.relpath(path, ROOT))
        total += commands
        all_failures.extend(failures)
    for failure in all_failures:
        print(failure + "\n")
    print(f"执行了 {total} 条命令，{len(all_failures)} 条与文档里写的不一致。")
    return 1 if all_failures else 0


if __name__ == "__main__":
    sys.exit(run_tool(main))
