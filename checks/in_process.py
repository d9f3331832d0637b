"""在检查自己的进程里运行套件的脚本，看到的和 `python3 脚本 参数` 一样：退出码、stdout、stderr 的字节。

为什么：检查要运行几百次 retrieval_qa.py 这些脚本。每次开一个新的 Python 要先花 50～150 毫秒启动、再编译一遍
近两千行的脚本，套件大半的时间花在这上面。在进程内运行省掉这两步，脚本照样从头执行一遍：

- 脚本和它导入的套件模块（脚本所在的套件根目录和 checks/ 里的 .py）每次都是新的模块对象，从头执行，
  模块里的缓存、全局变量不会从上一次带过来。编译好的代码按文件内容记住，同样的内容只编译一次。
- sys.argv、sys.path、环境变量、工作目录、临时目录都换成这一次的，运行完原样换回。
  sys.path 的第一项和新进程一样是脚本所在的目录，检查自己的目录拿掉：套件副本缺了文件就是缺了，不会用上仓库里的。
- stdin、stdout、stderr 换成内存里的流，编码、换行和缓冲方式和接到管道上的新进程一样
  （stdout 攒满管道的块大小或 flush 才写出，stderr 按行写出），所以两者合在一起时（课文记录）先后顺序也一样。
- 递归深度的上限加上检查自己已用掉的层数：脚本能递归多深（读很深的 JSON）和新进程一样。
- 没有终端：getpass 直接走它“没有终端”时的那条路，和在新会话里启动的子进程一样，绝不会去读开发者的键盘。
- sys.exit 的值就是退出码；没人接住的异常照 Python 的样子把 traceback 写到 stderr，退出码 1。

只有进程才看得到的，仍要用真的子进程（run_kit(..., process=True)）：关掉或写满的流、信号、Python 版本的守卫、
“不该导入的模块”（进程内标准库模块是共用的）、命令行参数里不是 UTF-8 的字节，以及自己再开子进程、让它直接写
stdout 的脚本（子进程写的是文件描述符 1，不经过这里换上的流）。
套件里有和标准库模块同名的 .py（学生加的 heapq.py）时，run_script 自己改开真的子进程：进程内标准库是共用的，
会用上（并留下）副本里的那个文件。请求超时留下的后台线程会等到假服务
关掉为止（每项检查结束时都会关）。
"""
import contextlib
import getpass
import importlib.abc
import importlib.machinery
import importlib.util
import io
import os
import subprocess
import sys
import tempfile
import traceback
import types
from pathlib import Path

from kit_helpers import KIT_PYTHON, has_terminal

ORIGINAL_GETPASS = getpass.getpass   # 检查没换过的 getpass：运行脚本时才换成“没有终端”的那条路
_compiled = {}   # 文件内容 → (编译好的代码, {路径: 换好文件名的代码})：同一份内容（仓库里的和副本里的）只编译一次，
                 # 同一个副本里一条条运行课文的命令时，文件名也只换一次


def compiled(path):
    """path 这个文件编译好的代码，代码里记的文件名就是 path（traceback 指向真正运行的那个文件）。"""
    source = Path(path).read_bytes()
    if source not in _compiled:
        _compiled[source] = (compile(source, str(path), "exec", dont_inherit=True), {})
    code, placed = _compiled[source]
    if str(path) not in placed:
        placed[str(path)] = renamed(code, str(path))
    return placed[str(path)]


def renamed(code, filename):
    if code.co_filename == filename:
        return code
    consts = tuple(renamed(item, filename) if isinstance(item, types.CodeType) else item for item in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


class KitModuleLoader(importlib.machinery.SourceFileLoader):
    """套件自己的模块：用记住的编译结果，不写 __pycache__。"""

    def get_code(self, fullname):
        return compiled(self.path)


class KitModuleFinder(importlib.abc.MetaPathFinder):
    """只管套件目录里的 .py：照 sys.path 的顺序找，找到的文件在套件里就用上面的加载器，别的交给 Python 照常导入。"""

    def __init__(self, directories):
        self.directories = directories

    def find_spec(self, name, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if "." in name or spec is None or not spec.origin or os.path.dirname(os.path.realpath(spec.origin)) not in self.directories:
            return None
        return importlib.util.spec_from_file_location(name, spec.origin, loader=KitModuleLoader(name, spec.origin))


class Sink(io.RawIOBase):
    """内存里的“管道”：写进来的字节按到达的先后接在一起。"""

    def __init__(self):
        self.data = bytearray()

    def writable(self):
        return True

    def write(self, data):
        self.data += data
        return len(data)


def pipe_buffer_size():
    """新进程接在管道上的 stdout 攒多少字节才写出：Python 用管道的 st_blksize（Linux 上是 4096），没有就用 8192。"""
    reader, writer = os.pipe()
    try:
        size = os.fstat(writer).st_blksize if hasattr(os.stat_result, "st_blksize") else 0
    finally:
        os.close(reader)
        os.close(writer)
    return size if size > 1 else io.DEFAULT_BUFFER_SIZE


PIPE_BUFFER = pipe_buffer_size()
NEWLINE = None if sys.platform == "win32" else "\n"   # 和 Python 给 stdin、stdout 的一样：Windows 上换行要转换，别处原样


def pipe_stream(sink, line_buffering, unbuffered):
    """接在管道上的文本流，和新进程的一样：UTF-8（套件自己也会再 reconfigure 一次），stderr 按行写出；
    环境变量 PYTHONUNBUFFERED 非空时（python -u）每次写都直接写出。"""
    errors = sys.__stdout__.errors if sys.__stdout__ else "strict"
    if unbuffered:
        return io.TextIOWrapper(sink, encoding="utf-8", errors=errors, newline=NEWLINE, write_through=True)
    return io.TextIOWrapper(io.BufferedWriter(sink, PIPE_BUFFER), encoding="utf-8", errors=errors, newline=NEWLINE,
                            line_buffering=line_buffering)


def kit_directories(script):
    """脚本所属的套件：根目录（有 retrieval_qa.py 的那一层）和它的 checks/，都是解析过链接的路径（字符串）。"""
    script = Path(script).resolve()
    root = script.parent if (script.parent / "retrieval_qa.py").exists() or script.parent.name != "checks" else script.parent.parent
    return {str(root), str(root / "checks")}


OWN_DIRECTORIES = kit_directories(__file__)   # 检查自己所在的套件：它导入的套件模块，脚本运行时都看不见


def module_folder(module):
    """模块文件所在的文件夹（字符串）；内置模块、没有文件的模块是 None。套件的模块都是从解析过链接的路径导入的
    （sys.path 里放的是 resolve() 过的文件夹），所以这里不必再解析：逐个解析一百多个模块的路径比运行脚本本身还慢，
    每次运行都要问一遍一百多个模块，所以也只比字符串，不造 Path。"""
    path = getattr(module, "__file__", None)
    return os.path.dirname(path) if path else None


def exit_code(value):
    """sys.exit(value) 让进程以什么退出码结束。"""
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    print(value, file=sys.stderr)
    return 1


def run_script(script, args, stdin=b"", cwd=None, env=None, merge_stderr=False):
    """像 `python3 script args`（stdin 送入这些字节）那样运行，返回 (退出码, stdout 字节, stderr 字节)。
    merge_stderr=True 时 stderr 也写进 stdout（终端里看到的样子），返回的 stderr 是空的。"""
    # 相对路径从 cwd 算起，和新进程一样接在它的当前文件夹后面：POSIX 上那是解析过链接的真实路径（macOS 的临时目录就在
    # 链接 /var 后面，traceback 里的文件名要一样）；Windows 上是照给的写法（realpath 还会把 RUNNER~1 这种短名展开，反而不同）
    here = os.path.realpath(cwd) if cwd and os.name == "posix" else cwd
    given = os.path.join(here, script) if cwd and not os.path.isabs(script) else str(script)
    directories = kit_directories(given)
    names = {path.stem for directory in directories if os.path.isdir(directory) for path in Path(directory).glob("*.py")}
    if names & set(sys.stdlib_module_names):   # 和标准库同名的文件（学生加的 heapq.py）：进程内标准库是共用的，开真的子进程
        command = KIT_PYTHON + [given, *args]
        done = subprocess.run(command, input=stdin, cwd=cwd, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE, start_new_session=has_terminal())
        return done.returncode, done.stdout, b"" if merge_stderr else done.stderr
    out_sink = Sink()
    err_sink = out_sink if merge_stderr else Sink()
    with like_a_new_process(given, args, stdin, cwd, env, directories, names) as main:
        unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
        sys.stdout, sys.stderr = out, err = pipe_stream(out_sink, False, unbuffered), pipe_stream(err_sink, True, unbuffered)
        try:
            exec(compiled(os.path.abspath(given)), main.__dict__)
            code = 0
        except SystemExit as stop:
            code = exit_code(stop.code)
        except BaseException as error:   # Python 自己会这样做：traceback 写到 stderr（不带这里的这一层），退出码 1
            traceback.print_exception(type(error), error, error.__traceback__.tb_next)
            code = 1
        for stream in (sys.stdout, sys.stderr, out, err):   # 进程结束时 Python 先冲 stdout 再冲 stderr
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
    return code, bytes(out_sink.data), b"" if merge_stderr else bytes(err_sink.data)


def stack_depth():
    frame, depth = sys._getframe(), 0
    while frame:
        frame, depth = frame.f_back, depth + 1
    return depth


@contextlib.contextmanager
def like_a_new_process(given, args, stdin, cwd, env, directories, names):
    """把这个进程暂时换成刚启动 `python3 given args` 的样子，给出空的 __main__ 模块；出来时一样一样换回。
    directories 是脚本所属的套件文件夹，names 是里面的模块名。"""
    script = Path(os.path.realpath(given))
    watched = directories | OWN_DIRECTORIES
    kit_names = names | {name for name, module in list(sys.modules.items()) if module_folder(module) in watched}
    saved = {"argv": sys.argv, "path": sys.path[:], "streams": (sys.stdin, sys.stdout, sys.stderr), "cwd": os.getcwd(),
             "environ": dict(os.environ), "tempdir": tempfile.tempdir, "getpass": getpass.getpass,
             "modules": {name: sys.modules.pop(name) for name in kit_names | {"__main__"} if name in sys.modules},
             "meta_path": sys.meta_path[:], "recursion": sys.getrecursionlimit()}
    before = set(sys.modules)
    try:
        sys.argv = [str(given)] + list(args)
        sys.path[:] = [str(script.parent)] + [path for path in saved["path"]   # 检查自己的文件夹，不管 sys.path 里是怎么写的
                                              if path and os.path.realpath(path) not in OWN_DIRECTORIES]
        sys.meta_path.insert(0, KitModuleFinder(directories))
        sys.stdin = io.TextIOWrapper(io.BufferedReader(io.BytesIO(stdin)), encoding="utf-8", newline=NEWLINE,
                                     errors=sys.__stdin__.errors if sys.__stdin__ else "strict")
        os.environ.clear()
        os.environ.update(saved["environ"] if env is None else env)
        os.chdir(cwd or saved["cwd"])
        tempfile.tempdir = None   # 下次用到时按这一次的 TMPDIR 重新决定
        if getpass.getpass is ORIGINAL_GETPASS:   # 检查自己换过（“不该读密钥”）就留着它的
            getpass.getpass = getpass.fallback_getpass   # 没有终端时 getpass 就是这样：提示、警告“藏不住输入”、回显
        sys.setrecursionlimit(saved["recursion"] + stack_depth())   # 脚本能用的递归深度和新进程一样（读很深的 JSON 时要紧）
        main = types.ModuleType("__main__")
        main.__file__, main.__builtins__ = os.path.abspath(given), __builtins__
        sys.modules["__main__"] = main
        yield main
    finally:
        sys.setrecursionlimit(saved["recursion"])
        sys.argv, (sys.stdin, sys.stdout, sys.stderr) = saved["argv"], saved["streams"]
        sys.path[:], sys.meta_path[:] = saved["path"], saved["meta_path"]
        os.chdir(saved["cwd"])
        os.environ.clear()
        os.environ.update(saved["environ"])
        tempfile.tempdir, getpass.getpass = saved["tempdir"], saved["getpass"]
        for name in set(sys.modules) - before | kit_names | {"__main__"}:   # 这一次导入的套件模块都扔掉，原来的放回去
            if name in kit_names or name == "__main__" or module_folder(sys.modules.get(name)) in directories:
                sys.modules.pop(name, None)
        sys.modules.update(saved["modules"])
        for directory in directories:   # 副本的文件夹不留在导入的缓存里
            sys.path_importer_cache.pop(directory, None)
