"""出处核对的实测：把人工标注的回答交给 retrieval_qa.py --check-draft，和标注对比。

    $ python3 checks/grounding_eval.py              # 标注集：混淆矩阵、各类错误被标出多少、精确率和召回率
    $ python3 checks/grounding_eval.py --rules      # 规则表：每条规则抓到多少、误标多少、单独抓到多少、花多少时间
    $ python3 checks/grounding_eval.py --details    # 再列出每一条判错的回答和程序给出的理由
    $ python3 checks/grounding_eval.py --holdout    # 留出集：如实的回答被误标多少（按写法）、每类错误抓到多少
    $ python3 checks/grounding_eval.py --evidence   # 带依据（evidence）的回答：带着依据和去掉依据各量一次，并排比较
    $ python3 checks/grounding_eval.py --save       # 维护者：改了代码以后把检查要的结果全部真的量一遍，写进 checks/measured.json
    $ python3 checks/grounding_eval.py --verify     # 全部真的量一遍，和 checks/measured.json 记下的比（CI 运行它）

标注（expected）是人按规则写的：这份回答应当通过（draft）、资料不足（missing）、需要复核（needs_review）
还是被拒绝（rejected）。“被标出”指 needs_review 或 rejected；hints 里的提示不改变状态，不算标出。
标注集（grounding_cases.json）的资料除了发布版，还有 grounding_documents.json 里的其他领域。
留出集（grounding_holdout.json）是另外几个领域（每轮盲测留下的），由没看过规则的人按聊天模型的写法写，只量、不拿来改规则。
结果量好记在 checks/measured.json 里（kit_helpers.Measured）：代码和量的时候一样就直接用，不一样就真的量。
不联网，不需要密钥。
"""
import contextlib
import functools
import hashlib
import io
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from unittest import mock

from kit_helpers import MEASURED, SHIPPED_DOCUMENTS, Measured, code_fingerprint, parse_tool_options, read_measured, run_tool

import retrieval_qa

CASES = Path(__file__).resolve().parent / "grounding_cases.json"
DOCUMENT_SETS = Path(__file__).resolve().parent / "grounding_documents.json"   # 发布版以外的资料（另外几个领域）
HOLDOUT = Path(__file__).resolve().parent / "grounding_holdout.json"
VERDICTS = ["draft", "missing", "needs_review", "rejected"]
FLAGGED = {"needs_review", "rejected"}
CORE = 4   # 规则表的前四条是核心规则（第 04 课正文）
# 标注里的类别，用第 04 课的说法归成几类（同一类的几个旧名字是不同时候写标注的人起的）
KIND_NAMES = {
    "faithful_copy": "如实·照抄", "faithful_paraphrase": "如实·改写", "faithful_format": "如实·换了格式",
    "faithful_two_chunks": "如实·两个片段", "polite_closing": "如实·客套话", "faithful": "如实·聊天写法",
    "changed_number": "改了数字", "laundered_number": "改了数字", "unit_change": "换了单位", "unit_conversion": "换了单位",
    "wrong_arithmetic": "算错了", "moved_number": "数字挪到另一档", "tier_swap": "数字挪到另一档",
    "polarity": "说反了", "threshold": "条件词反了", "condition_flip": "条件词反了", "conjunction": "条件词反了",
    "date_time": "日期时间改了", "link_changed": "链接改了", "altered_quote": "引文改了",
    "appended_condition": "追加的分句", "invented_clause": "追加的分句", "comma_clause": "追加的分句",
    "invented": "编的句子", "invented_sentence": "编的句子", "short_invented": "编的句子", "wrong_source": "出处写错",
    "swapped_subject": "主语或付钱的人换了", "role_swap": "主语或付钱的人换了",
    "dropped_exception": "丢了例外", "overgeneralised": "说得过宽", "mixed": "几处都错",
    "id_marker": "越界编号", "out_of_set": "越界编号", "no_content": "没有内容", "missing": "资料不足",
    # 带依据（evidence）的回答才有的几类
    "quote_from_other_chunk": "引文出自别的片段", "no_evidence": "没给依据的句子", "irrelevant_quote": "引文和这句话无关",
    "mixed_rule_flipped": "说反了", "link_or_phone_changed": "链接改了", "appended_clause": "追加的分句"}
LEGEND = ("说明：“标出”= needs_review 或 rejected（hints 不算）。如实的回答被标出是误标；其余各类是错误的回答，"
          "被标出是抓到。")
STYLE_NAMES = {"copy": "照抄", "paraphrase": "改写", "polite": "客套的开头结尾", "list": "列表", "merged": "合并两个片段",
               "long": "四五句的长回答", "restated_number": "数字换了写法", "computed": "算出来的数",
               "not_in_docs": "“资料里没有提到…”"}


def load_cases():
    return json.loads(CASES.read_text(encoding="utf-8-sig"))


def documents_for(case, directory, document_sets):
    """这条回答依据哪份资料：默认是发布版的副本；写了 "documents": "hotel" 的，用 document_sets 里那一份。"""
    name = case.get("documents")
    if name is None:
        return SHIPPED_DOCUMENTS
    path = Path(directory) / f"{name}.json"
    if not path.exists():
        path.write_text(json.dumps(document_sets[name], ensure_ascii=False), encoding="utf-8")
    return path


def load_holdout():
    """留出集：返回 (回答的列表, {领域名: 资料})。每条回答记下它属于哪个领域。"""
    data = json.loads(HOLDOUT.read_text(encoding="utf-8-sig"))
    cases = [dict(case, documents=domain["name"]) for domain in data["domains"] for case in domain["cases"]]
    return cases, {domain["name"]: domain["documents"] for domain in data["domains"]}


class Result:
    """一条回答的结果：标注（case）、程序的判定（status）、每条规则在哪种对上找到了问题（findings：[[规则名, 依据是不是猜的]]；
    硬规则先拒绝了、草稿太长或是 missing 时为 None：这时出处核对没有逐句进行），--details 时还有 problems 和 hints。"""

    def __init__(self, case, status, findings, problems=(), hints=()):
        self.case, self.status, self.findings, self.problems, self.hints = case, status, findings, problems, hints

    @property
    def faithful(self):
        return self.case["expected"] == "draft"

    def status_with(self, rules):
        """只用 rules 这几条规则（按它们在规则表里的 level）时，这条回答会是什么状态。"""
        if self.findings is None:
            return self.status
        levels = {rule.guessed_level if guessed else rule.level for rule in rules for name, guessed in self.findings if name == rule.name}
        return "rejected" if "rejected" in levels else "needs_review" if "needs_review" in levels else "draft"


def run_case(case, directory, document_sets):
    """真的走一遍 --check-draft（在进程内运行，省去启动子进程的时间）。返回输出的 JSON 对象。"""
    answer = Path(directory) / "answer.json"
    answer.write_text(json.dumps(case["answer"], ensure_ascii=False), encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        retrieval_qa.main([case["question"], "--check-draft", str(answer), "--documents",
                           str(documents_for(case, directory, document_sets))])
    return json.loads(out.getvalue())


def evaluate(cases=None, document_sets=None, timings=None, core=False, details=False):
    """返回 [Result]。默认量标注集。给了 timings（字典）时，累计每条规则花的秒数；details=True 时连 problems、hints 也要：
    这两种都每条真的量，别的先看 checks/measured.json 里有没有记下的（kit_helpers.Measured）。
    core=True：出处核对只用第 04 课的核心（core_only），量选读多抓到多少、多误标多少。"""
    if cases is None:
        cases, document_sets = load_cases(), json.loads(DOCUMENT_SETS.read_text(encoding="utf-8-sig"))
    texts = {name: json.dumps(value, ensure_ascii=False, sort_keys=True) for name, value in (document_sets or {}).items()}
    texts[None] = SHIPPED_DOCUMENTS.read_text(encoding="utf-8-sig")
    documents = {name: hashlib.sha256(text.encode("utf-8")).hexdigest() for name, text in texts.items()}   # 每份资料的指纹只算一次
    seen = []
    original = retrieval_qa.grounding_findings

    def recording(*args, **kwargs):   # 记下每条规则找到了什么：规则表的实测数字就从这里来
        findings = original(*args, **kwargs)
        seen.append([list(pair) for pair in dict.fromkeys((rule.name, guessed) for rule, _, guessed in findings)])
        return findings

    def measure(case):   # 真的走一遍 --check-draft：[状态, 每条规则找到的问题]（details 时再加 problems、hints）
        seen.clear()
        output = run_case(case, directory, document_sets)
        return [output["status"], seen[0] if seen else None] + ([output["problems"], output["hints"]] if details else [])

    timed = [mock.patch.object(rule, "find", timer(rule.find, rule.name, timings)) for rule in retrieval_qa.RULES] \
        if timings is not None else []
    # 同一份资料文件每条回答都要读一遍、检查一遍；读出来的内容每次都一样，所以记住它，量得快一倍。记住的是 --check-draft
    # 真正调用的 read_and_check（读字节、逐条检查）；资料的警告（第 05 课）不影响核对的结果，这里不找
    remembered = functools.lru_cache(maxsize=None)(retrieval_qa.read_and_check)
    with tempfile.TemporaryDirectory() as directory, mock.patch.object(retrieval_qa, "read_and_check", remembered), \
            mock.patch.object(retrieval_qa, "document_warnings", lambda records: []), \
            mock.patch.object(retrieval_qa, "grounding_findings", recording), contextlib.ExitStack() as stack:
        for patch in timed:
            stack.enter_context(patch)
        if core:   # 核心自己的 check_grounding 调用它自己的 grounding_findings：这时不记每条规则找到了什么
            stack.enter_context(mock.patch.object(retrieval_qa, "check_grounding", core_only()["check_grounding"]))
        if timings is not None or details:
            known = [measure(case) for case in cases]
        else:   # 决定结果的全部输入：问题、回答、资料（代码由 checks/measured.json 里的指纹管）
            known = Measured("grounding-core" if core else "grounding").results(
                cases, lambda case: [case["question"], case["answer"], documents[case.get("documents")]], measure)
    return [Result(case, *values) for case, values in zip(cases, known)]


@functools.lru_cache(maxsize=None)
def core_only():
    """只执行 retrieval_qa.py 到第 04 课“选读”分节线为止的源代码：第 03 课和第 04 课的核心（四条规则、只读阿拉伯数字）。
    学生读到分节线就停，跑的就是这些。返回执行出来的名字表。"""
    source = Path(retrieval_qa.__file__).read_text(encoding="utf-8")
    namespace = {"__name__": "core_only", "__file__": retrieval_qa.__file__}
    exec(compile(source[:source.index("# ---------- 第 04 课 · 扩展规则（选读）")], "retrieval_qa.py（核心）", "exec"), namespace)
    return namespace


def timer(find, name, timings):
    def timed(*args):
        started = time.perf_counter()
        try:
            return find(*args)
        finally:
            timings[name] = timings.get(name, 0.0) + time.perf_counter() - started
    return timed


def catch_rate(results, kinds):
    chosen = [result.status in FLAGGED for result in results if result.case["kind"] in kinds]
    return sum(chosen), len(chosen)


def faithful_flagged(results, status=lambda result: result.status):
    marks = [status(result) in FLAGGED for result in results if result.faithful]
    return sum(marks), len(marks)


def errors_caught(results, status=lambda result: result.status):
    """不如实的回答（标注为 needs_review）被标出多少。"""
    marks = [status(result) in FLAGGED for result in results if result.case["expected"] == "needs_review"]
    return sum(marks), len(marks)


def by_kind(results):
    """{第 04 课的说法: [是否被标出]}，如实的几类在前。"""
    groups = defaultdict(list)
    for result in results:
        groups[KIND_NAMES.get(result.case["kind"], result.case["kind"])].append(result.status in FLAGGED)
    return dict(sorted(groups.items(), key=lambda item: (not item[0].startswith("如实"), item[0])))


def report(results, details=False):
    lines = ["混淆矩阵（行：标注，列：程序的判定）", "标注".ljust(14) + "".join(v.rjust(14) for v in VERDICTS)]
    for expected in VERDICTS:
        row = [sum(1 for r in results if r.case["expected"] == expected and r.status == actual) for actual in VERDICTS]
        lines.append(expected.ljust(16) + "".join(str(count).rjust(14) for count in row))
    truth = [(r.case["expected"] in FLAGGED, r.status in FLAGGED) for r in results]
    true_positive = sum(1 for should, did in truth if should and did)
    flagged = sum(1 for _, did in truth if did)
    should_flag = sum(1 for should, _ in truth if should)
    lines += ["", f"“需要复核或拒绝”的精确率：{true_positive}/{flagged} = {true_positive / flagged:.0%}",
              f"“需要复核或拒绝”的召回率：{true_positive}/{should_flag} = {true_positive / should_flag:.0%}", "",
              "各类回答被标出的比例：", LEGEND]
    lines += [f"  {name}：{sum(marks)}/{len(marks)}" for name, marks in by_kind(results).items()]
    wrong = [r for r in results if r.status != r.case["expected"]]
    lines += ["", f"与标注不一致：{len(wrong)} 条（共 {len(results)} 条）"]
    if details:
        lines += detail_lines(wrong)
    return "\n".join(lines)


def detail_lines(results):
    lines = []
    for r in results:
        lines.append(f"  [{KIND_NAMES.get(r.case['kind'], r.case['kind'])}] 标注 {r.case['expected']}，判定 {r.status}："
                     f"{r.case['answer']['draft']}")
        lines.extend(f"      {problem}" for problem in r.problems)
        lines.extend(f"      （提示）{hint}" for hint in r.hints)
        lines.append(f"      标注理由：{r.case['why']}")
    return lines


def rule_figures(results, rule, guessed=False):
    """一条规则在一组结果上的实测：(标出的错误回答, 误标的如实回答, 只有它标出的错误回答)。guessed：只算它在猜的对上找到的
    （没写依据的回答、依据没盖住的话），不然只算 evidence 给的对上找到的。"""
    fired = [r for r in results if r.findings and [rule.name, guessed] in r.findings]
    others = [other for other in retrieval_qa.RULES if other is not rule]
    caught = [r for r in fired if not r.faithful and r.case["expected"] in FLAGGED]
    alone = [r for r in caught if r.status_with(others) not in FLAGGED]
    return len(caught), sum(1 for r in fired if r.faithful), len(alone)


def rules_report(labelled, holdout, timings, answers):
    """规则表：每条规则在标注集和留出集上的实测（evidence 给的对、猜的对各一行），和写在 retrieval_qa.RULES 里的数对照；
    再比较只用核心规则和用全部规则。"""
    lines = [f"规则表（retrieval_qa.py 的 RULES；核心规则是前 {CORE} 条）。抓到 = 标出的错误回答，误标 = 标出的如实回答，",
             "单独 = 去掉这条规则就不再被标出的错误回答；level：rejected 拒绝、needs_review 改状态、hint 只作提示。",
             "每条规则两行：evidence 给的对上（measured），猜的对上（guessed：没写依据的回答、依据没盖住的话）。",
             f"{'规则':<26}{'对':<10}{'level':<14}{'标注集 抓到/误标/单独':<22}{'留出集 抓到/误标/单独':<22}{'每份回答':>10}  抓什么"]
    for rule in retrieval_qa.RULES:
        per_answer = timings.get(rule.name, 0.0) * 1000 / max(answers, 1)
        for guessed, level in ((False, rule.level), (True, rule.guessed_level)):
            mine, theirs = rule_figures(labelled, rule, guessed), rule_figures(holdout, rule, guessed)
            lines.append(f"{rule.name if not guessed else '':<26}{'猜的' if guessed else 'evidence':<10}{level:<14}{'{}/{}/{}'.format(*mine):<22}"
                         f"{'{}/{}/{}'.format(*theirs):<22}" + (f"{per_answer:>7.3f} ms  {rule.catches}" if not guessed else ""))
    lines += ["", "只用核心规则 → 全部规则（按表里的 level）："]
    for name, results in (("标注集", labelled), ("留出集", holdout)):
        core, every = retrieval_qa.RULES[:CORE], retrieval_qa.RULES
        lines.append(f"  {name}：如实的回答被误标 {'{}/{}'.format(*faithful_flagged(results, lambda r: r.status_with(core)))}"
                     f" → {'{}/{}'.format(*faithful_flagged(results, lambda r: r.status_with(every)))}；"
                     f"错误的回答被标出 {'{}/{}'.format(*errors_caught(results, lambda r: r.status_with(core)))}"
                     f" → {'{}/{}'.format(*errors_caught(results, lambda r: r.status_with(every)))}")
    return "\n".join(lines)


def holdout_figures(results):
    """留出集的三个数：(如实的回答被标出, 如实的回答总数)、(不如实的被标出, 总数)、(该拒绝的被拒绝, 总数)。"""
    refused = [r.status == "rejected" for r in results if r.case["expected"] == "rejected"]
    return faithful_flagged(results), errors_caught(results), (sum(refused), len(refused))


def without_evidence(cases):
    """同一批回答去掉 evidence：第 04 课“带依据和不带依据”的并排比较用它。"""
    return [dict(case, answer={k: v for k, v in case["answer"].items() if k != "evidence"}) for case in cases]


def evidence_report(labelled, holdout):
    """带依据的回答（标注集里的和留出集里的），带着 evidence（完整的检查、只用核心）和去掉 evidence 的结果并排：
    labelled、holdout 是 (带依据的结果, 只用核心的结果, 去掉依据的结果)。"""
    lines = ["带依据（evidence）的回答：同一批回答带着依据（完整的检查、只用第 04 课的核心）、去掉依据各量一次。", LEGEND]
    for name, (kept, core, dropped) in (("标注集", labelled), ("留出集", holdout)):
        for label, results in (("带着依据", kept), ("只用核心", core), ("去掉依据", dropped)):
            flagged, caught = faithful_flagged(results), errors_caught(results)
            lines.append(f"  {name}·{label}：如实的被误标 {flagged[0]}/{flagged[1]} = {flagged[0] / flagged[1]:.1%}，"
                         f"错误的被标出 {caught[0]}/{caught[1]} = {caught[0] / caught[1]:.1%}")
    return "\n".join(lines)


def evidence_sets():
    """(标注集里带依据的回答和资料, 留出集里带依据的回答和资料)。"""
    document_sets = json.loads(DOCUMENT_SETS.read_text(encoding="utf-8-sig"))
    holdout, holdout_documents = load_holdout()
    return (([c for c in load_cases() if "evidence" in c["answer"]], document_sets),
            ([c for c in holdout if "evidence" in c["answer"]], holdout_documents))


def holdout_report(results, details=False):
    (false_alarms, faithful), (caught, subtle), (refused, should_refuse) = holdout_figures(results)
    lines = [f"如实的回答被误标：{false_alarms}/{faithful} = {false_alarms / faithful:.1%}",
             f"不如实的回答被标出：{caught}/{subtle} = {caught / subtle:.1%}",
             f"该拒绝的（正文里的越界编号、没有内容）被拒绝：{refused}/{should_refuse}", "", "各类：", LEGEND]
    lines += [f"  {name}：标出 {sum(marks)}/{len(marks)}" for name, marks in by_kind(results).items()]
    styles = defaultdict(list)
    for r in results:
        if r.faithful:
            for style in r.case.get("styles", []):
                styles[style].append(r.status in FLAGGED)
    if styles:
        lines += ["", "如实的回答按写法（一份回答可以有几种写法）："]
        lines += [f"  {STYLE_NAMES.get(style, style)}：误标 {sum(marks)}/{len(marks)}" for style, marks in styles.items()]
    if details:
        lines += detail_lines([r for r in results if (r.status in FLAGGED) != (r.case["expected"] in FLAGGED)])
    return "\n".join(lines)


def measure_everything(pick=lambda items: items):
    """真的量一遍检查和课文命令要的全部结果：标注集、留出集，带依据的回答只用核心、去掉依据各一次，第 07 课的几样。
    pick(一串回答) 选出要量的（抽查时每 50 项取一项）。返回 {种类: {键: 结果}}（kit_helpers.Measured.saving）。"""
    import web_eval
    Measured.saving = {}
    try:
        evaluate(pick(load_cases()), json.loads(DOCUMENT_SETS.read_text(encoding="utf-8-sig")))
        cases, documents = load_holdout()
        evaluate(pick(cases), documents)
        for cases, documents in evidence_sets():
            evaluate(pick(cases), documents, core=True)
            evaluate(without_evidence(pick(cases)), documents)
        web_eval.measure_everything(pick)
        return Measured.saving
    finally:
        Measured.saving = None


def save_or_verify(save):
    """--save：把 measure_everything 量到的连同代码的指纹写进 checks/measured.json。--verify：和文件里记下的逐项比，
    说出不同的、没记下的有多少（退出码 1），都一样时退出码 0。"""
    fresh, fingerprint = measure_everything(), code_fingerprint()
    count = sum(map(len, fresh.values()))
    if save:
        kinds = [f'{json.dumps(kind)}: {{\n' + ",\n".join(f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}" for key, value in sorted(known.items()))
                 + "}" for kind, known in sorted(fresh.items())]   # 一项一行：重新量以后 git diff 看得出哪几项变了
        MEASURED.write_text(f'{{"fingerprint": "{fingerprint}",\n' + ",\n".join(kinds) + "}\n", encoding="utf-8")
        print(f"量了 {count} 项，写进了 checks/{MEASURED.name}（代码的指纹 {fingerprint}）：把它和改过的代码一起提交。")
        return 0
    kept = read_measured()
    if kept is None:
        print(f"checks/{MEASURED.name} 没有、读不了或不是量具写的样子：运行 python3 checks/grounding_eval.py --save")
        return 1
    stale = kept["fingerprint"] != fingerprint
    unlike = [(kind, key) for kind, known in fresh.items() for key, value in known.items() if kept.get(kind, {}).get(key) != value]
    print(f"真的量了 {count} 项，和 checks/{MEASURED.name} 记下的不同或没记下的有 {len(unlike)} 项" +
          ("；文件是另一份代码量的" if stale else "") + ("" if not (unlike or stale) else "：运行 python3 checks/grounding_eval.py --save"))
    return 1 if unlike or stale else 0


def main(argv):
    options = parse_tool_options(argv, "用法：python3 checks/grounding_eval.py [--rules | --holdout | --evidence | --save | --verify] [--details]",
                                 __doc__, flags=("--details", "--holdout", "--rules", "--evidence", "--save", "--verify"))
    if options["--save"] or options["--verify"]:
        return save_or_verify(options["--save"])
    if options["--evidence"]:
        pairs = [(evaluate(cases, documents), evaluate(cases, documents, core=True), evaluate(without_evidence(cases), documents))
                 for cases, documents in evidence_sets()]
        print(evidence_report(*pairs))
        return 0
    if options["--rules"]:
        timings = {}
        labelled = evaluate(timings=timings)
        cases, documents = load_holdout()
        holdout = evaluate(cases, documents, timings=timings)
        print(rules_report(labelled, holdout, timings, len(labelled) + len(holdout)))
        return 0
    if options["--holdout"]:
        cases, documents = load_holdout()
        print(f"留出集：checks/{HOLDOUT.name}（{len(documents)} 个领域，{len(cases)} 份回答）")
        print(holdout_report(evaluate(cases, documents, details=options["--details"]), details=options["--details"]))
        return 0
    # 标注是照着发布版资料写的，所以总在它的副本上量：量的是检查本身，和你改没改资料无关
    print(f"资料：checks/{SHIPPED_DOCUMENTS.name}（发布版的副本）和 checks/{DOCUMENT_SETS.name}；标注：checks/{CASES.name}")
    print(report(evaluate(details=options["--details"]), details=options["--details"]))
    return 0


if __name__ == "__main__":
    sys.exit(run_tool(main))
