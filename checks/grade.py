"""全班一起看：用老师手里这份可信的代码和检查，给每个学生的套件副本各出一行。

    $ python3 checks/grade.py 作业/张三 作业/李四 …          # Markdown：列的说明、表格、一行总结，写到 stdout
    $ python3 checks/grade.py 作业/* --out 成绩.csv           # CSV（带 BOM，Excel 能直接打开；数字就是数字）
    $ python3 checks/grade.py 作业/* --out 成绩.md            # 同样的 Markdown 写进文件

每个参数一行，从不因为一个副本不对就整张表作废：不是文件夹、是 zip 压缩包、不像套件、里面有两份套件的，那一行写明原因；
套件放深了一两层的（压缩包解开两次），找到它照样判，并注明。一份副本怎么坏（上千层的文件夹、几 GB 的文件、读不了的地方、
grade.py 自己的漏洞）都只记在它那一行；每份副本有一份时间（全班的时间平分），用完了注明没比完。
学生副本里的代码一行也不运行、不导入，git 也不在副本里运行：读的只是它的资料文件、练习的文件、进度文件、git 的设置，
以及每个文件的内容（一块块读，有上限；和老师的比，换行符 CRLF/LF、开头的 BOM 不算不同）。命名管道、设备一律不打开，不会卡住。
练习四、五、六的作品按意思和全班、和套件里的示范比，一样的不算。
练习只凭副本里查得到的证据算“做完”：现在的资料和 trick.json，以及练习一、二、三、五做完时 exercise.py 存下的资料
（checks/.exercise-done/，用老师的检查重判）。进度文件 checks/.exercise-progress.json 是学生自己也能写的，
只有它这么说的“做完又改回了”标成“自报”。不联网，不需要密钥，不修改学生的文件。正常出表时退出码为 0，用法不对为 2，--out 写不出去为 5。
"""
import contextlib
import functools
import hashlib
import json
import os
import re
import stat
import sys
import time
from pathlib import Path

from kit_helpers import ROOT, SHIPPED_FILES, committed_chunks, is_linked, link_description, parse_tool_options, python_would_use, run_tool, write_out

import acceptance
import evaluate
import exercise
import retrieval_qa
import transcripts
from model_reply_assistant import describe_os_error, one_line, read_head, visible

USAGE = "用法：python3 checks/grade.py 学生的套件文件夹 … [--out FILE.md | FILE.csv] [--details]"
DATA = "retrieval_documents.json"
# 学生照课文自己写的文件：不算“和老师的套件不同”
OWN_FILES = exercise.OWN_FILES   # 练习自己写的文件：是链接（别人的）就不算分
STUDENT_FILES = {DATA, *OWN_FILES.values()} | {exercise.saved_copy(number, Path("checks")).as_posix() for number in exercise.SAVED}
# 学生自己写的（练习做完时存的资料也是）；课文让存的文件见 lesson_files()
SKIPPED_NAMES = {".exercise-progress.json", ".DS_Store", "Thumbs.db", "__MACOSX",
                 ".venv", "venv", "node_modules", ".idea", ".vscode"}   # 虚拟环境、编辑器、系统的：和作业无关（见 is_tool_folder）
COPY_SECONDS = 2   # 每份副本最多的时间（走文件夹、比内容、比字节码）：平常一份几十毫秒，用完了这一行说明哪些没比完，接着判下一份
CLASS_SECONDS = 8   # 全班一共的时间：剩下的时间平分给还没判的副本，故意拖慢的副本再多，全班也在这么久里判完
MIN_COPY_SECONDS = 0.2   # 全班的时间用完以后，每份仍有这么久：老实的副本一份几十毫秒，照样判得完
MAX_WORKS = 20   # 每份副本最多拿这么多份作品（自己加的记录……）和全班比：几百条记录的副本只比前面的，并注明
MAX_ENTRIES = 50000   # 一份副本最多看这么多个文件：一个班的副本不会有这么多，再多就是故意的
MAX_COMPARED_BYTES = 4 * 2 ** 20   # 比内容的文件最大 4 MB：老师的套件里最大的文件几百 KB，更大的一定改过，不读
APPLE_DOUBLE = "._"   # macOS 打包时给每个文件配的附属文件（._retrieval_qa.py）：不是 Python 代码，也导入不了
GIT = "git"   # 老师的套件是 git 仓库时，用它列出跟踪的文件、改过没提交的文件
MAX_LISTED = 15   # “和老师的套件不同”最多列这么多条，其余只说个数
# 新加了就要看一眼：Python 启动时、导入时会自动读它们
RISKY = (".py", ".pyw", ".pth", ".pyc", ".pyo", ".so", ".pyd")   # Python 会自动导入或执行的文件（.pyw 是 Windows 上的源代码）
LEGEND = [
    "副本：相对于这些副本共同的文件夹。资料：能不能读；读不了时是程序自己的报错（截短）。",
    "练习 1–7：“做完”= 副本里的资料、trick.json、pairs.json、domains.json 现在就能证明；“做完，未改回”= 练习二、三、五做完还没改回去；"
    "“做完，已改回”= 做完时存下的资料（checks/.exercise-done/）用老师的检查重判过；“做完（有存档）”= 现在的资料看不出来，"
    "做完时存下的资料重判过；"
    "“自报已改回”= 只有学生自己的进度文件这么说，老师核实不了；“待看”= 练习五只凭学生说“这句是指令”，清单没认出，程序核对不了，"
    "那句在“要看一眼”里；“和别人一样”= 练习四、五、六的作品和别的副本的一样（改标点、换顺序、改一两个字也算），两边都不算；空 = 没做。"
    "照抄套件里的示范（课文、检查、dedupe_pairs.json）不算做完。练习 4 的“做完”只证明检查判它为 draft、写了 why："
    "草稿是真错还是本来就对，程序分不出，用 --details 看草稿和 why。",
    "recall@3、精确率：关键词检索在 checks/eval_questions.json 上的成绩。验收：离线验收记录通过几行。",
    "和老师的套件不同：加了、改了、缺了的文件（内容按 SHA-256 比，超过 4 MB 的不读；和老师 git 仓库里以前提交过的某一版一样的另起一条"
    "“另有旧版本的文件”）；新加的 .py/.pth 会被 Python 自动导入，标“风险”；"
    "链接（符号链接、硬链接）写明指向哪里或和几个文件共用，资料或 trick.json 是链接的不算分。",
    "要看一眼：这一行为什么需要老师打开副本看看（改了 Python 文件、检查或课文，换回了旧版本，有链接，和别的副本一样，练习只有自报，"
    "git 设置会在老师敲 git 命令时执行命令，有读不了的地方……）。每份副本最多判 2 秒、全班一共约 8 秒，没看完的也写在这里。",
]


def walk_copy(kit, deadline):
    """走一遍副本，什么文件都不打开：返回 (文件, 字节码, git, 说明)。文件是 {相对路径: lstat}（不进 SKIPPED_NAMES、
    虚拟环境），字节码是 __pycache__ 里的 {相对路径: lstat}，git 是每一处 .git 的相对路径，说明是要记在这一行的 [(原因, 细节)]。
    用一张待走的清单而不用递归（上千层的文件夹也走得完），不跟着链接走；读不了的文件夹、太长的路径、时间用完、文件太多，
    都只是一条说明。"""
    files, caches, gits, notes, pending = {}, {}, [], [], [""]   # 待走的文件夹，相对于 kit
    while pending:
        folder = pending.pop()
        if time.monotonic() > deadline or len(files) + len(caches) >= MAX_ENTRIES:
            notes.append(("没看完", f"文件太多或太深，看了 {len(files) + len(caches)} 个就停了"))
            break
        try:
            with os.scandir(os.path.join(kit, folder)) as listing:   # 字符串拼路径：一千层的文件夹，Path 每层都要重新拆一遍
                entries = sorted((entry.name, entry.stat(follow_symlinks=False)) for entry in listing)
        except OSError as error:
            notes.append(("有读不了的地方", f"{shortened_path(folder)}/（{describe_os_error(error)}）"))
            continue
        in_cache = os.path.basename(folder) == "__pycache__"
        if {"HEAD", "objects", "refs"} <= {name for name, _ in entries}:   # 文件夹本身就是 git 仓库（没有 .git 的“裸仓库”）
            gits.append(folder or ".")
        for name, info in entries:
            path = f"{folder}/{name}" if folder else name
            if name == ".git":
                gits.append(path)
            elif stat.S_ISDIR(info.st_mode):
                if not in_cache and not is_tool_folder(kit, path):
                    pending.append(path)
            elif name in SKIPPED_NAMES or name.startswith(APPLE_DOUBLE):
                continue
            elif in_cache:
                caches[path] = info
            else:
                files[path] = info
    return files, caches, gits, notes


def shortened_path(path, limit=160):
    """表格里的一条说明或路径：太长（一千层的文件夹）只留头尾。"""
    return path if len(path) <= limit else path[:20] + "…" + path[-(limit - 21):]


def is_tool_folder(kit, path):
    """不看的文件夹：名字在 SKIPPED_NAMES 里的（.venv、node_modules、__MACOSX……），和 python3 -m venv 建的虚拟环境
    （不管叫什么：顶层有 pyvenv.cfg（PEP 405），还有 bin/ 或 Scripts/）。一个新建的虚拟环境就有上千个文件，和作业无关。
    可顶层有 __init__ 的是 Python 能按这个名字导入的包（checks/unittest/、json/ 打扮成虚拟环境，就换掉了标准库），照样看；
    老师的套件里也有的文件夹（checks/、lessons/）也照样看。"""
    try:
        names = set(os.listdir(os.path.join(kit, path)))
    except OSError:
        return False
    venv = "pyvenv.cfg" in names and bool(names & {"bin", "Scripts"})
    if not (venv or os.path.basename(path) in SKIPPED_NAMES) or any(name.startswith("__init__.") for name in names):
        return False
    return not any(name.startswith(path + "/") for name in teacher_files())


def committed_digest(path, info, blob=False):
    """文件内容按 as_committed 的样子（去掉开头的 BOM、CRLF 换成 LF）的 SHA-256；blob=True 时是 git 给它的编号
    （和 git hash-object 一样，老师仓库里的旧版本按它比）。一块块读（committed_chunks），超过 MAX_COMPARED_BYTES 的不读，
    返回 None（老师的套件里没有这么大的文件，它一定是改了）。读不了时抛出 OSError。"""
    if info.st_size > MAX_COMPARED_BYTES:
        return None
    with open(path, "rb") as handle:
        size = sum(map(len, committed_chunks(handle))) if blob else 0
        handle.seek(0)
        digest = hashlib.sha1(b"blob %d\0" % size) if blob else hashlib.sha256()
        for chunk in committed_chunks(handle):
            digest.update(chunk)
    return digest.hexdigest()


def same_bytes(path, info, name):
    """和老师的这个文件一字节不差：多数副本的多数文件就是这样，直接比字节，不必再换行、算指纹。"""
    theirs = teacher_bytes(name)
    if info.st_size != len(theirs):
        return False
    with open(path, "rb") as handle:
        return handle.read(len(theirs)) == theirs


@functools.lru_cache(maxsize=None)
def teacher_bytes(name):
    return (ROOT / name).read_bytes()


@functools.lru_cache(maxsize=None)
def teacher_digest(name):
    path = ROOT / name
    return committed_digest(path, os.stat(path))


@functools.lru_cache(maxsize=None)   # 老师这一份只看一次，不是每个副本看一次
def teacher_files():
    """老师这份套件的文件：是 git 仓库就用 git 跟踪的文件（老师自己放进来的成绩表不算）；不是（下载的压缩包）就用发布的
    文件清单 SHIPPED_FILES 里现有的：老师自己照课文做过练习、存下的 记录.csv、trick.json 不算套件的文件。"""
    listed = git_output("ls-files", "-z") or b""
    return {name for name in listed.decode("utf-8").split("\0") if name} or {name for name in SHIPPED_FILES if (ROOT / name).is_file()}


@functools.lru_cache(maxsize=None)
def teacher_history():
    """老师的 git 仓库里每个文件提交过的各个版本：{路径（相对于套件的根目录）: {内容的 git 编号}}。不是 git 仓库、没装 git
    时是空的。套件放在更大的仓库的子文件夹里时，仓库里的路径要去掉前面那一段。"""
    prefix = (git_output("rev-parse", "--show-prefix") or b"").decode("utf-8").strip()
    listed = git_output("log", "--all", "--no-renames", "--format=", "--raw", "--no-abbrev", "-z") or b""
    fields = listed.decode("utf-8", errors="replace").split("\0")   # 每处改动两段：“:旧模式 新模式 旧编号 新编号 状态”、路径
    versions = {}
    for change, path in zip(fields[0::2], fields[1::2]):
        if change.startswith(":") and path.startswith(prefix):
            versions.setdefault(path[len(prefix):], set()).add(change.split()[3])
    return versions


def earlier_version(path, info, name):
    """path 的内容是老师仓库里 name 以前提交过的某个版本（BOM、CRLF 不算不同）。按 git 给内容的编号比：
    对得上就是一字不差的旧版本，不是看着像。"""
    return committed_digest(path, info, blob=True) in teacher_history().get(name, ())


def teacher_edits():
    """老师这份套件里改过、还没提交的文件（git 跟踪的）；不是 git 仓库、没装 git 就是空列表。"""
    status = git_output("status", "--porcelain", "--untracked-files=no") or b""
    return [line[3:] for line in status.decode("utf-8", errors="replace").splitlines()]


def git_output(*args):
    """在老师这份套件里运行 git，返回 stdout 的字节；不是 git 仓库（下载的压缩包）或没装 git 时返回 None，当作不是仓库。"""
    import subprocess
    try:
        done = subprocess.run([GIT, "-C", str(ROOT), *args], capture_output=True)
    except OSError:   # 没装 git（Windows、macOS 上常见）：当作不是仓库，不抛出一大段 traceback
        return None
    return done.stdout if done.returncode == 0 else None


def compare_with_teacher(kit, files, deadline, complete=True):
    """和老师的套件比：返回 (差别的说明列表, 要看一眼的原因列表)。files 是 walk_copy 走出来的文件；complete=False（没走完）时
    不说缺了什么：没看到不等于没有。整个没带的文件夹（lessons/、checks/……）只说一次；读不了、太大、时间用完没比的文件各记一条，
    算要看一眼。"""
    mine = {name for name in teacher_files() if not is_student_file(name)}
    differences, concerns, absent, older, unread = [], [], set(), [], []
    for name in sorted(mine | set(files)):
        info = files.get(name)
        if is_student_file(name):   # 学生照课文存的文件不算差别；可它是链接（指向别人的），就是拿别人的作业
            if info is not None and is_linked(kit / name):
                differences.append(f"{name}（{link_description(kit / name)}）")
                concerns.append(("有链接", name))
            continue
        if info is None and not complete:
            continue
        if info is None:
            top = name.split("/")[0]
            if "/" in name and top not in files and not any(other.startswith(top + "/") for other in files):
                if top not in absent and not os.path.islink(kit / top):   # 没带，或者是链接（链接另有一条）
                    differences.append(f"{top}/（整个没带）")
                absent.add(top)
            else:
                differences.append(f"{name}（缺）")
        elif stat.S_ISLNK(info.st_mode):
            differences.append(f"{name}（{link_description(kit / name)}）")
            concerns.append(("有链接", name))
        elif not stat.S_ISREG(info.st_mode):
            differences.append(f"{name}（不是普通文件）")
            concerns.append(("有命名管道或设备", name))
        elif name not in mine:
            risky = name.endswith(RISKY)
            differences.append(f"{name}（加的{'，风险' if risky else ''}）")
            if risky:
                concerns.append(("加了 Python 文件", name))
        elif info.st_nlink > 1:   # 硬链接：和另一个文件（多半是别人的副本）共用同一份内容
            differences.append(f"{name}（{link_description(kit / name)}）")
            concerns.append(("有链接", name))
        elif time.monotonic() > deadline:
            unread.append(f"{name}（时间用完，没比）")
        else:
            try:
                if same_bytes(kit / name, info, name):
                    continue
                digest = committed_digest(kit / name, info)
                if digest == teacher_digest(name):
                    continue
                if digest is not None and earlier_version(kit / name, info, name):   # 老师以前发的那一版：不是和同学抄了一样的改动
                    older.append(name)
                    continue
            except OSError as error:
                unread.append(f"{name}（{describe_os_error(error)}）")
                continue
            differences.append(f"{name}（{'改了' if digest else f'超过 {MAX_COMPARED_BYTES // 2 ** 20} MB，没读'}）")
            if name.endswith(RISKY):
                concerns.append(("改了 Python 文件", name))
            elif name.startswith(("checks/", "lessons/")) or digest is None:   # 改了检查的数据或课文：检查和练习的结论可能跟着变
                concerns.append(("改了检查或课文" if digest else "文件大得不正常", name))
    differences = shortened(differences)   # 整个副本是旧版本、带着一堆别的文件时，一格写不下
    if older:   # 旧版本的文件另起一条：早克隆的副本有二十几个，不能把真正的改动挤出这一格
        differences.append(f"（另有旧版本的文件 {len(older)} 个：{'、'.join(older[:3])}{'……' if len(older) > 3 else ''}）")
        concerns += [("是老师以前发的旧版本", name) for name in older]   # 一字不差也要看：学生可能故意换回了旧的检查
    concerns += [("有读不了的地方", name) for name in unread]
    kept = sorted(name for name in files if name in lesson_files())
    if kept:   # 照课文存的文件：另起一条说个数，不和真正的差别混在一起
        differences.append(f"（另有课文让存的文件 {len(kept)} 个）")
    return differences, concerns


BYTECODE_CHECKER = r"""
import hashlib, json, marshal, sys
try:   # 只在类 Unix 系统上有：反序列化要的内存超过 1 GiB 就失败，而不是把机器拖垮
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, resource.getrlimit(resource.RLIMIT_AS)[1]))
except Exception:
    pass
compiled = {}
for line in sys.stdin:
    pyc, source, optimize = json.loads(line)
    text = open(source, "rb").read()
    key = (hashlib.sha256(text).hexdigest(), optimize)
    if key not in compiled:   # 三十份副本的源代码多半一样：每份只编译一次
        try:
            compiled[key] = compile(text, source, "exec", dont_inherit=True, optimize=optimize)
        except (SyntaxError, ValueError):
            compiled[key] = None
    try:
        same = marshal.loads(open(pyc, "rb").read()[16:]) == compiled[key]
    except Exception:
        same = False
    print("ok" if same else "nosource" if compiled[key] is None else "bad", flush=True)
"""
BYTECODE_VERDICTS = {"ok": "", "nosource": "源代码编译不了，字节码却在", "bad": "字节码和副本里的源代码对不上",
                     "died": "读这份字节码时要的内存不正常", "late": "这一份的时间用完了，没比完"}


def bytecode_problems(kit, caches, deadline):
    """副本 __pycache__ 里会被 Python 用上、却不是副本自己的源代码编出来的字节码：([(相对路径, 原因)], 别的版本的个数)。
    - 头部记着的源代码大小和修改时间（或哈希）和现在的源代码对不上的，Python 会重新编译、不用它，不算（学生改过又改回的常见）；
    - 对得上的，用老师这台机器的 Python 编译源代码，和字节码比代码本身（伪造的字节码可以把头部写得和源代码一样，骗过 Python）；
    - 别的 Python 版本写的，这台机器读不了、核对不了，只数一数（返回的第二项）。
    比较交给 CHECKER 这个子进程（字节码是学生给的数据，几十个字节就能让反序列化要几 GB 内存），用的是这份副本剩下的时间。"""
    import importlib.util
    found, others = [], 0
    for name, info in sorted(caches.items()):
        pyc = kit / name
        source = pyc.parent.parent / (pyc.name.split(".")[0] + ".py")
        try:
            if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
                found.append((name, "是链接或不是普通文件"))
                continue
            source_info = os.lstat(source)
            if not stat.S_ISREG(source_info.st_mode):
                found.append((name, "没有对应的源代码"))
                continue
            if max(info.st_size, source_info.st_size) > MAX_COMPARED_BYTES:
                found.append((name, f"字节码或源代码超过 {MAX_COMPARED_BYTES // 2 ** 20} MB，没比"))
                continue
            head = read_head(pyc, 16)[:16]
        except FileNotFoundError:
            found.append((name, "没有对应的源代码"))
            continue
        except OSError as error:
            found.append((name, f"读不了（{describe_os_error(error)}）"))
            continue
        if head[:4] != importlib.util.MAGIC_NUMBER:
            others += 1
            continue
        if not python_would_use(head, source):
            continue
        optimize = 2 if ".opt-2." in pyc.name else 1 if ".opt-1." in pyc.name else 0
        verdict = CHECKER.verdict(str(pyc), str(source), optimize, deadline)
        if verdict:
            found.append((name, verdict))
    return found, others


class BytecodeChecker:
    """全班共用一个比字节码的子进程（运行过套件的副本源代码多半一样，只编译一次）；一份副本的时间用完、或子进程死了，
    就关掉它，下一份再开一个新的。"""

    def __init__(self):
        self.process = None

    def verdict(self, pyc, source, optimize, deadline):
        """一份字节码的结论（BYTECODE_VERDICTS 里的一句，一样就是空字符串）；等到 deadline 还没有结论就是“时间用完”。"""
        import queue
        import subprocess
        import threading
        if time.monotonic() > deadline:
            return BYTECODE_VERDICTS["late"]
        if self.process is None:
            # -I：不看环境变量和用户的 site-packages；-S：也不加载 site（只用标准库，子进程少花几十毫秒）
            self.process = subprocess.Popen([sys.executable, "-I", "-S", "-c", BYTECODE_CHECKER], stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            self.answers = queue.Queue()   # 另一个线程读子进程的回答：读的时候也能按时间放弃
            threading.Thread(target=read_answers, args=(self.process.stdout, self.answers), daemon=True).start()
        try:
            self.process.stdin.write(json.dumps([pyc, source, optimize]).encode("utf-8") + b"\n")
            self.process.stdin.flush()
            answer = self.answers.get(timeout=max(0.0, deadline - time.monotonic())).decode("ascii", errors="replace").strip()
        except OSError:   # 子进程已经死了
            answer = "died"
        except queue.Empty:
            answer = "late"
        if answer in ("", "died", "late"):
            self.close()
        return BYTECODE_VERDICTS.get(answer or "died", BYTECODE_VERDICTS["bad"])

    def close(self):
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            for pipe in (self.process.stdin, self.process.stdout):
                with contextlib.suppress(OSError):   # 子进程已经死了：管道里剩下的不要了
                    pipe.close()
            self.process = None


def read_answers(out, answers):
    """另一个线程里：把子进程的回答一行行放进 answers，读完（或管道已被关掉）时放一个空行。"""
    try:
        for line in out:
            answers.put(line)
    except (OSError, ValueError):   # 这个子进程超时被关掉了，管道也关了
        pass
    answers.put(b"")


CHECKER = BytecodeChecker()


GIT_RUNS = ("core.fsmonitor", "core.hookspath", "core.sshcommand", "core.pager", "core.editor", "core.askpass", "core.gitproxy",
            "core.worktree", "sequence.editor", "diff.external", "credential.helper", "gpg.program", "pager.", "alias.",
            "interactive.difffilter", "uploadpack.packobjectshook", "include.path", "includeif.")
GIT_RUNS_ANYWHERE = (".textconv", ".command", ".clean", ".smudge", ".process", ".helper", ".driver", ".program", ".cmd")
GIT_FILES = 20   # 一个副本里最多读这么多份 git 设置（include 套 include、子模块）；再多本身就不正常


def git_problems(kit, gits):
    """老师在副本里敲 git status、git diff 时会执行命令或把 git 引到别处的设置：[(原因, 细节)]。只读文件，从不运行 git：
    每一处 .git（文件夹，或写着 “gitdir: …” 的文件：worktree、子模块），它的 config、config.worktree、commondir 指向的
    公共仓库、modules/ 下子模块的 config，以及 [include]、[includeIf] 引进来的文件，都照 git 的写法读。
    钩子（hooks/ 里不是 .sample 的文件）、链接成别处的 config、指到副本外面的仓库也算。"""
    problems, pending, seen = [], [], set()
    for git in gits:
        path = kit / git
        if os.path.islink(path):
            problems.append(("git 设置会执行命令", f"{git} 是链接"))
        elif path.is_file():
            target = read_head(path, 4096)[:4096].decode("utf-8-sig", errors="replace").removeprefix("gitdir:").strip()
            pending.append((path.parent / target, f"{git} 指向的 {target}"))
        else:
            pending.append((path, git))
    while pending and len(seen) < GIT_FILES:
        folder, shown = pending.pop()
        if folder in seen:
            continue
        seen.add(folder)
        if not str(folder.resolve()).startswith(str(kit.resolve())):
            problems.append(("git 设置会执行命令", f"{shown} 在副本外面"))
        commondir = folder / "commondir"
        if commondir.is_file() and not commondir.is_symlink():
            pending.append((folder / read_head(commondir, 4096)[:4096].decode("utf-8-sig", errors="replace").strip(), shown + " 的公共仓库"))
        hooks = folder / "hooks"
        if hooks.is_dir():
            problems += [("git 设置会执行命令", f"{shown}/hooks/{hook.name}") for hook in sorted(hooks.iterdir()) if not hook.name.endswith(".sample")]
        modules = folder / "modules"
        if modules.is_dir() and not modules.is_symlink():
            pending += [(module, f"{shown}/modules/{module.name}") for module in sorted(modules.iterdir()) if module.is_dir()]
        configs = [(folder / name, f"{shown}/{name}") for name in ("config", "config.worktree")]
        while configs and len(seen) < GIT_FILES:
            config, shown_config = configs.pop()
            seen.add(config)
            if config.is_symlink():
                problems.append(("git 设置会执行命令", f"{shown_config} 是链接"))
                continue
            if not config.is_file():
                continue
            data = read_head(config, MAX_COMPARED_BYTES)
            if len(data) > MAX_COMPARED_BYTES:   # 后面没读的部分可能藏着设置
                problems.append(("git 设置会执行命令", f"{shown_config} 超过 {MAX_COMPARED_BYTES // 2 ** 20} MB，没读完"))
            for key, value in git_config(data[:MAX_COMPARED_BYTES].decode("utf-8-sig", errors="replace")):   # git 也跳过开头的 BOM
                if key.startswith(GIT_RUNS) or key.endswith(GIT_RUNS_ANYWHERE) and key.count(".") >= 2 or key.startswith("filter."):
                    problems.append(("git 设置会执行命令", f"{shown_config}：{key}"))
                if key == "include.path" or key.startswith("includeif.") and key.endswith(".path"):
                    included = config.parent / os.path.expanduser(value)
                    configs.append((included, f"{shown_config} 引进的 {value}"))
    return [(kind, visible(detail, 120)) for kind, detail in dict.fromkeys(problems)]


def git_config(text):
    """git 设置文件里的每一项：[(节.子节.键，全小写；子节照原样, 值)]。照 git 的写法：[core]、[core "x"]、[core.x]，
    注释 # 和 ;，行尾的 \\ 接下一行，“键”不写等号就是 true，节和键可以写在同一行（[core]fsmonitor = …）。"""
    entries, section = [], ""
    for line in re.sub(r"\\\r?\n", "", text).splitlines():
        line = line.strip()
        if line.startswith("["):
            header, _, line = line[1:].partition("]")
            name, _, sub = header.strip().partition(" ")
            section = name.lower() + ("." + sub.strip().strip('"') if sub.strip() else "")
            line = line.strip()
        if not line or line[0] in "#;":
            continue
        key, _, value = line.partition("=")
        entries.append((f"{section}.{key.strip().lower()}", value.strip().strip('"')))
    return entries


def is_student_file(name):
    return name in STUDENT_FILES or name in lesson_files() or name.endswith(".backup.json")


@functools.lru_cache(maxsize=None)
def lesson_files():
    """课文让学生存的文件：老师这份套件的课文里 ```json file=名字 块的名字（good.json、answer.json、obey-send.json……）。
    从课文里读出来，不靠猜：课文加了一个文件，这里自动就认得。"""
    names = set()
    for lesson in sorted((ROOT / "lessons").glob("*.md")):
        names |= {step[2] for step in transcripts.parse_markdown(lesson) if step[0] == "file"}   # 和课文执行器读的是同一批块
    return frozenset(names)


def find_kit(folder):
    """(套件所在的文件夹, “要看一眼”的原因, 说明)；文件夹本身就是套件时原因和说明都是空的。不像，就往下找一层、再找一层
    （压缩包解开两次，kit-main/kit-main/ 很常见），正好找到一份就用它；找到不止一份，说出是哪几个，不替老师挑。"""
    if looks_like_kit(folder):
        return folder, "", ""
    for depth, deeper in ((1, "放深了一层"), (2, "放深了两层")):
        found = [kit for kit in sorted(folder.glob("/".join(["*"] * depth)))   # 链接过去的文件夹不进：那是别人的东西
                 if kit.is_dir() and not kit.is_symlink() and not kit.parent.is_symlink() and looks_like_kit(kit)]
        if len(found) == 1:
            return found[0], deeper, f"套件在 {found[0].relative_to(folder).as_posix()}/ 里"
        if found:
            shown = "、".join(f"{kit.relative_to(folder).as_posix()}/" for kit in found[:5])
            return None, "不止一份套件", f"里面有 {len(found)} 份套件（{shown}），不知道判哪一份：删掉多余的，或分开交"
    return None, "不像套件", "文件夹里没有 retrieval_documents.json，也没有 retrieval_qa.py"


def looks_like_kit(folder):
    return (folder / DATA).exists() or (folder / DATA).is_symlink() or (folder / "retrieval_qa.py").exists()


def grade(path, seconds=COPY_SECONDS):
    """一个参数一行：返回这一行的各项（dict）。判这一份时出了任何错（读不了的文件、太深的路径、grade.py 自己没想到的），
    都只记在这一行，整张表照样出。seconds 是这一份的时间。资料文件在这一行里只读一次：练习、评测、验收都要用它。"""
    from unittest import mock
    once = functools.lru_cache(maxsize=None)(retrieval_qa.read_and_check)
    row = {"资料": "—", "练习": {}, "recall": None, "precision": None, "验收": None, "不同": [], "要看": []}
    try:
        with mock.patch.object(retrieval_qa, "read_and_check", once):
            grade_copy(path, row, time.monotonic() + seconds)
    except OSError as error:
        where = shortened_path(error.filename) if isinstance(error.filename, str) else ""
        row["要看"].append(("有读不了的地方", f"{where}（{describe_os_error(error)}），没判完"))
    except Exception as error:   # grade.py 自己的漏洞也只坏这一行：老师照样拿到全班的表
        row["要看"].append(("判这一份时出错", f"{type(error).__name__}，没判完：请把这一份发给维护者"))
    return row


def grade_copy(path, row, deadline):
    """grade() 的正文：往 row 里填。row["套件"] 是找到的套件文件夹（没找到是 None）；row["作品"]、row["文件"] 留给
    same_as_another、same_file_as_another 在全班之间比，比的时候不再读文件。"""
    kit, kind, note = find_kit(path)
    row["套件"] = kit
    if kit is None:
        row["要看"].append((kind, note))
        return
    if kind:
        row["要看"].append((kind, note))
    files, caches, gits, notes = walk_copy(kit, deadline)
    row["要看"] += notes
    row["不同"], concerns = compare_with_teacher(kit, files, deadline, complete=not notes or notes[-1][0] != "没看完")
    row["要看"] += concerns
    try:
        row["要看"] += git_problems(kit, gits)
    except OSError as error:
        row["要看"].append(("git 设置会执行命令", f"读不了（{describe_os_error(error)}），没法确认"))
    problems, others = bytecode_problems(kit, caches, deadline)
    row["不同"] += shortened([f"{name}（{why}，风险）" for name, why in problems])
    row["要看"] += [("字节码有问题", f"{name}（{why}）") for name, why in problems]
    if others:   # 学生用别的 Python 运行过套件就有：和伪造的分不出来，只提一句
        row["不同"].append(f"（另有别的 Python 版本写的字节码 {others} 个，这台机器核对不了）")
    row["文件"] = own_file_ids(kit)
    changed = [entry.removesuffix("（改了）") for entry in row["不同"] if entry.endswith("（改了）")]
    row["作品"] = [(None, name, committed_digest(kit / name, files[name])) for name in changed]   # 改了的套件文件比内容
    data = kit / DATA
    if is_linked(data):   # 资料是别人的文件：不是这个副本里的证据，不算分
        row["资料"] = f"{link_description(data)}，不算本人的资料"
        row["要看"].append(("资料是链接", "练习不算分"))
        return
    linked = {number for number, name in OWN_FILES.items() if is_linked(kit / name)}   # 别人的 trick.json、pairs.json、domains.json：那个练习不算分
    documents, error = exercise.load(data)
    if error is not None:
        reason = error.removeprefix("错误：").replace(f"资料文件 {data}", "")   # 长长的路径换成一行里看得见的原因
        row["资料"] = "读不了：" + one_line(reason.lstrip("：:，, "), 60)
        row["要看"].append(("资料读不了", ""))
        return
    row["资料"] = "能读"
    claimed = exercise.remembered_done(True, kit / "checks" / exercise.PROGRESS.name)   # 学生自己写的进度：只当作自报
    for number in exercise.EXERCISES:
        done = False if number in linked else exercise.CHECKS[number](documents, data)[0]
        if done:
            row["练习"][number] = "做完，未改回" if number in exercise.RESTORE else "做完"
        elif number in exercise.SAVED and exercise.shown_by_saved_copy(number, kit / "checks", documents):   # 链接的、对不上的不算
            restored = number in exercise.RESTORE and exercise.restored(number, documents)
            row["练习"][number] = "做完，已改回" if restored else "做完（有存档）"
        elif number in exercise.RESTORE and number in claimed and exercise.restored(number, documents):
            row["练习"][number] = "自报已改回"
    proof = []   # 证明练习五做完的那份资料：现在的，或做完时存下的
    if row["练习"].get(5) == "做完，未改回":
        proof = documents
    elif row["练习"].get(5):
        proof = exercise.load(exercise.saved_copy(5, kit / "checks"))[0] or []
    claims = exercise.unverified_claims(proof)
    if claims:   # 只凭学生说“这句是指令”：筛子没认出，程序核对不了它是不是指令，由老师看
        row["练习"][5] = "待看"
        row["要看"].append(("练习五待老师看", "、".join(claims)))
    unreadable = [name for number, name in OWN_FILES.items()   # 做了练习、文件却存坏了（GBK、语法错）：不能只是空着一格
                  if number not in linked and exercise.own_file_problem(number, kit)]
    if unreadable:
        row["要看"].append(("练习的文件读不了", "、".join(unreadable) + "（--details 或 exercise.py 说原因）"))
    reported = [str(number) for number, state in row["练习"].items() if state == "自报已改回"]
    if reported:   # 谁都能手写进度文件：老师问一句，或看看副本
        row["要看"].append(("练习只有自报", "、".join(f"练习{number}" for number in reported)))
    work = own_work(kit, documents)
    if len(work) > MAX_WORKS:   # 几百条自己加的记录：不是做练习，只拿前面的和全班比
        row["要看"].append(("作品多得不正常", f"{len(work)} 份，只和全班比了前 {MAX_WORKS} 份"))
    row["作品"] += work[:MAX_WORKS]
    questions = json.loads(evaluate.QUESTIONS.read_text(encoding="utf-8-sig"))
    metrics, _ = evaluate.measure(questions, lambda q: [hit["id"] for hit in retrieval_qa.retrieve(q, documents)])
    row["recall"], row["precision"] = metrics["recall"], metrics["precision"]
    accepted = [acceptance.judge(case, *acceptance.run_case(case["question"], False, str(data)), False)
                for case in acceptance.CASES]
    row["验收"] = (sum(1 for line in accepted if not line[-1].startswith("否")), len(accepted))
    if row["验收"][0] < row["验收"][1]:
        failed = [f"{one_line(line[0], 20)}（{one_line(line[-1].removeprefix('否：'), 40)}）" for line in accepted
                  if line[-1].startswith("否")]
        row["要看"].append(("验收没过", "、".join(failed)))


def rows_for(arguments):
    """每个参数一行：[(名字, 行)]。名字相对于这些参数共同的文件夹。"""
    unique = list(dict.fromkeys(os.path.abspath(argument) for argument in arguments))   # 不跟着链接走：链接就是链接
    paths = [Path(path) for path in unique]
    common = Path(os.path.commonpath(unique)) if len(paths) > 1 else paths[0].parent
    result, deadline = [], time.monotonic() + CLASS_SECONDS
    for index, path in enumerate(paths):
        left = len(paths) - index   # 连这一份在内还剩几份：平分剩下的时间
        name = os.path.relpath(path, common) if path != common else str(path)
        skipped = {"资料": "—", "要看": []}
        if path.is_symlink():   # 整个副本指向别人的文件夹：一行也不判，说明指向哪里
            result.append((name, dict(skipped, 不同=[f"整个文件夹是{link_description(path)}"], 要看=[("有链接", "整个文件夹是链接，不算分")])))
        elif not os.path.lexists(path):
            result.append((name, dict(skipped, 要看=[("找不到", "没有这个文件夹")])))
        elif path.name in SKIPPED_NAMES or path.name.startswith(APPLE_DOUBLE) or path.name in ("__pycache__", ".git"):   # 作业/* 也会选中班级文件夹里的这些
            made_by = "macOS 打包时留下的" if path.name == "__MACOSX" or path.name.startswith(APPLE_DOUBLE) else "系统或工具自动生成的"
            result.append((name, dict(skipped, 要看=[("跳过", f"{made_by}，不是谁的作业")])))
        elif is_zip(path):   # 交来的是压缩包：说清要先解开，不要只说“不是文件夹”
            result.append((name, dict(skipped, 要看=[("跳过", "是 zip 压缩包：先解压，再把解开的文件夹交给 grade.py")])))
        elif not path.is_dir():
            result.append((name, dict(skipped, 要看=[("跳过", "不是文件夹（比如上次写出的成绩表）")])))
        else:
            result.append((name, grade(path, min(COPY_SECONDS, max(MIN_COPY_SECONDS, (deadline - time.monotonic()) / left)))))
    CHECKER.close()
    same_as_another(result)
    same_file_as_another(result)
    return result


def is_zip(path):
    """交来的 .zip 压缩包：扩展名是 .zip、开头也真是 zip 的标记 PK\\x03\\x04。Excel、Word 的文件也是 zip 格式，
    扩展名不同，不说它是压缩包。命名管道、设备不打开。"""
    try:
        return path.suffix.lower() == ".zip" and path.is_file() and not path.is_symlink() and read_head(path, 4)[:4] == b"PK\x03\x04"
    except OSError:
        return False


def own_file_ids(kit):
    """副本里学生自己的文件（资料、trick.json、存档……）各是磁盘上的哪一个文件：{文件名: (设备号, inode, 这一边是不是链接, 是不是符号链接)}。
    两个副本指向同一个文件，same_file_as_another 就认得出来。"""
    found = {}
    for file in sorted(STUDENT_FILES):
        try:
            info = os.stat(kit / file)   # 跟着链接走到真正的文件：同一个文件的设备号和 inode 相同
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            symlink = (kit / file).is_symlink()
            found[file] = (info.st_dev, info.st_ino, symlink or info.st_nlink > 1, symlink)
    return found


def same_file_as_another(result):
    """资料、trick.json 或练习存档其实是另一个副本里的文件：链接过去的一边点名它指向谁的；硬链接分不出谁抄了谁，
    两边都点名对方。被符号链接指着的一边不点名：它多半是被抄的那个。"""
    owners = {}
    for name, row in result:
        for file, (device, inode, borrowed, symlink) in row.get("文件", {}).items():
            owners.setdefault((device, inode), []).append((name, row, file, borrowed, symlink))
    for shared in owners.values():
        for name, row, file, borrowed, _ in shared:
            others = [f"{other} 的 {their}" for other, _, their, _, symlink in shared if other != name and not symlink]
            if borrowed and others:
                row["要看"].append(("和别的副本是同一个文件", f"{file}（{'、'.join(others)}）"))


def own_work(kit, documents):
    """这个副本里学生自己写的东西，拿去和全班比：[(练习编号, 说法, 文字)]。练习四的草稿；练习六的结果对
    （所有摘要按字排好接起来：不管先后、不管 a 和 b 谁在前）；资料和练习存档里自己加的记录的正文（发布版的、照抄示范的不算：
    大家照课文贴的示范本来就一样）。资料文件本身和照课文存的文件不比：大家照着同一篇课文做练习一、二、三，本来就一样。"""
    work = []
    trick, pairs = own_json(kit / "trick.json"), own_json(kit / "pairs.json")
    draft = trick.get("draft") if isinstance(trick, dict) else None
    if isinstance(draft, str) and retrieval_qa.plain(draft):
        work.append((4, "trick.json 的草稿", draft))
    if pairs is not None and not exercise.pairs_problem(pairs):
        work.append((6, "pairs.json 的结果对", "\n".join(sorted(retrieval_qa.plain(pair[side]["snippet"]) for pair in pairs for side in "ab"))))
    saved = [exercise.saved_copy(number, kit / "checks") for number in exercise.SAVED]
    copies = [documents] + [exercise.load(path)[0] or [] for path in saved if path.is_file() and not is_linked(path)]
    texts = dict.fromkeys(record["text"] for copy in copies for record in exercise.own_added(copy))
    work += [(5, f"{DATA} 或存档里加的记录", text) for text in texts]
    return work


def same_as_another(result):
    """几个副本的作品一样：在“要看一眼”里点名另一个副本，那个练习也不算做完——分不出谁抄了谁。改了的套件文件按内容的指纹比，
    学生写的文字按 4 字片段比（exercise.similar）。片段按多少排好：差得太多的不可能像，不比。"""
    works = [(name, row, number, label, value if number is None else retrieval_qa.shingles(value))
             for name, row in result for number, label, value in row.get("作品", [])]
    works.sort(key=lambda work: 0 if work[2] is None else len(work[4]))
    for index, (name, row, number, label, key) in enumerate(works):
        for other, other_row, _, other_label, other_key in works[index + 1:]:
            if number is not None and len(other_key) * retrieval_qa.NEAR_DUPLICATE > len(key):
                break
            if other != name and other_label == label and (key == other_key if number is None else exercise.similar(key, other_key)):
                for flagged, named in ((row, other), (other_row, name)):
                    flagged["要看"].append(("和别的副本一样", f"{label}（{named}）"))
                    if number in flagged.get("练习", {}):
                        flagged["练习"][number] = "和别人一样"
    for _, row in result:
        row["要看"] = list(dict.fromkeys(row["要看"]))


def own_json(path):
    """学生自己写的 JSON 文件的内容；是链接（符号链接或硬链接）、不是普通文件、读不了的返回 None（链接另有一条：
    “和别的副本是同一个文件”，不再算作一样）。"""
    if is_linked(path) or not path.is_file():
        return None
    value, problem = exercise.student_json(path)
    return None if problem else value


def fraction(pair):
    return "—" if not pair or not pair[1] else f"{pair[0]}/{pair[1]}"


def markdown(rows):
    lines = ["列的说明："] + [f"- {text}" for text in LEGEND] + [""]
    header = ["副本", "资料", *[f"练习{n}" for n in exercise.EXERCISES], "recall@3", "精确率", "验收", "和老师的套件不同", "要看一眼"]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, row in rows:
        cells = [name, row["资料"], *[row.get("练习", {}).get(n, "") for n in exercise.EXERCISES],
                 evaluate.ratio(row["recall"]) if row.get("recall") else "—",
                 evaluate.ratio(row["precision"]) if row.get("precision") else "—", fraction(row.get("验收")),
                 "、".join(map(shortened_path, row.get("不同", []))) or "无", looks(row)]
        lines.append("| " + " | ".join(visible(str(cell), 10 ** 6).replace("|", "｜") for cell in cells) + " |")   # 换行、控制字符写出来
    return "\n".join(lines + ["", summary(rows)]) + "\n"


def looks(row):
    """“要看一眼”这一格：同一种原因并成一条，例如“改了 Python 文件：a.py、b.py”；一种原因最多点名 MAX_LISTED 处，
    其余只说个数（副本里带了一整个虚拟环境，一格也不会写上几万字）。"""
    kinds = {}
    for kind, detail in row["要看"]:
        kinds.setdefault(kind, []).extend([shortened_path(detail)] if detail else [])
    return "；".join(kind + (f"：{'、'.join(shortened(details))}" if details else "") for kind, details in kinds.items())


def shortened(details):
    """最多 MAX_LISTED 条，多出来的只说个数。"""
    return details if len(details) <= MAX_LISTED else details[:MAX_LISTED] + [f"……另有 {len(details) - MAX_LISTED} 处"]


def summary(rows):
    """一行总结：几个副本，几个要看一眼，按原因数副本。"""
    copies = [row for _, row in rows if row["资料"] != "—"]
    counts = {}
    for row in copies:
        for kind in dict.fromkeys(kind for kind, _ in row["要看"]):
            counts[kind] = counts.get(kind, 0) + 1
    said = "，".join(f"{kind} {count} 个" for kind, count in sorted(counts.items(), key=lambda item: -item[1]))
    flagged = sum(1 for row in copies if row["要看"])
    if sum(counts.values()) > flagged:   # 原因加起来比副本多：说清一个副本可以占几种，免得读成数错了
        said = "按原因数，一个副本可以占几种：" + said
    others = len(rows) - len(copies)
    return (f"总结：{len(copies)} 个副本，{flagged} 个要看一眼" + (f"（{said}）" if said else "")
            + (f"；另有 {others} 个参数没有判（不是套件、找不到、不是作业，或整个文件夹是链接），见最后一列" if others else "") + "。")


def details(rows):
    """--details：每个副本的练习四草稿和它说的错处（trick.json 的 draft 和 why），以及练习五里学生加的每条记录（资料里的和
    存档里的）：说是指令的那句（instruction），清单认不认得。老师一眼看得出草稿是不是真的错了、那句是不是真的指令。
    副本的名字和表里的一样；算没算分也写上。"""
    lines = ["", "练习四、五学生自己写的（算没算分见表）："]
    for name, row in rows:
        kit = row.get("套件")
        if kit is None:   # 不是套件（文件、命名管道、找不到……）或整个是链接：不打开它，原因见表里这一行
            lines.append(f"- {visible(name, 60).replace('|', '｜')}：不看：见表里这一行的说明")
            continue
        answer, problem = exercise.student_json(kit / "trick.json")
        state = row.get("练习", {}).get(4) or "不算"
        if isinstance(answer, dict):
            said = f"草稿「{visible(str(answer.get('draft', '')), 80)}」；说它错在「{visible(str(answer.get('why', '')), 80)}」（练习四：{state}）"
        else:
            said = "没有 trick.json" if problem and problem.startswith("没有找到") else f"trick.json 读不了（练习四：{state}）"
        for where, path in (("资料", kit / DATA), ("存档", exercise.saved_copy(5, kit / "checks"))):
            documents = exercise.load(path)[0] if path.is_file() and not is_linked(path) else None
            for record in exercise.own_added(documents or []):
                claim = record.get("instruction")
                screen = "清单认得" if retrieval_qa.instruction_like(record["title"] + " " + record["text"]) else "清单不认得"
                said += (f"；练习五{where}里的 {visible(record['id'], 20)}「{visible(record['text'], 60)}」（{screen}"
                         + (f"，说是指令的：「{visible(str(claim), 60)}」" if claim is not None else "") + "）")
        lines.append(f"- {visible(name, 60).replace('|', '｜')}：{said.replace('|', '｜')}")
    return "\n".join(lines) + "\n"


def csv_rows(rows):
    header = ["副本", "资料", *[f"练习{n}" for n in exercise.EXERCISES], "recall@3", "精确率", "验收通过", "验收行数",
              "和老师的套件不同", "要看一眼"]
    body = []
    for name, row in rows:
        share = lambda pair: round(pair[0] / pair[1], 3) if pair and pair[1] else ""   # noqa: E731  数字就是数字
        accepted = row.get("验收") or ("", "")
        body.append([name, row["资料"], *[row.get("练习", {}).get(n, "") for n in exercise.EXERCISES],
                     share(row.get("recall")), share(row.get("precision")), *accepted,
                     "、".join(map(shortened_path, row.get("不同", []))), looks(row)])
    return [header] + [[visible(cell, 10 ** 6) if isinstance(cell, str) else cell for cell in line] for line in body]


def main(argv):
    options = parse_tool_options(argv, USAGE, __doc__, values=("--out",), flags=("--details",), positionals=1000)
    if not options["args"]:
        print(f"错误：至少要给一个学生的套件文件夹。{USAGE}", file=sys.stderr)
        return 2
    out = options["--out"]
    if options["--details"] and out is not None and out.lower().endswith(".csv"):
        print("错误：--details 写不进 CSV：不加 --out，或者用 --out 成绩.md。", file=sys.stderr)
        return 2
    if out is not None and Path(out).suffix.lower() not in (".csv", ".md"):
        print(f"错误：--out 的文件名要以 .csv 或 .md 结尾（写成哪种格式看后缀），现在是 {out}。", file=sys.stderr)
        return 2
    edited = teacher_edits()
    if edited:   # 比较以老师的工作区为准：老师自己改过又没提交的文件，每个学生都会显得“改了”
        print(f"提醒：老师这份套件有没提交的改动（{'、'.join(edited[:5])}{'……' if len(edited) > 5 else ''}），"
              "学生的文件是和改过的样子比的。", file=sys.stderr)
    rows = rows_for(options["args"])
    if len(rows) < len(options["args"]):   # 作业/李四 和 作业/李四/ 是同一个文件夹：只判一次，说一声，免得老师数行数对不上
        print(f"提醒：有 {len(options['args']) - len(rows)} 个参数和前面的是同一个文件夹（写法不同），只判一次。", file=sys.stderr)
    text = markdown(rows) + (details(rows) if options["--details"] else "")
    if out is None:
        sys.stdout.write(text)
        return 0
    lost = write_out(out, csv_rows(rows), text)
    if lost:   # 写不出去：退出码 5
        return lost
    print(f"已写入 {out}：{len(rows)} 行（每个参数一行）。{summary(rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(run_tool(main))
