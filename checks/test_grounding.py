"""出处核对：数字、引文、句子逐条和引用的片段对照；--check-draft 离线检查保存的回答；标注集上的实测指标；规则表。"""
import contextlib
import functools
import inspect
import io
import json
import re
import tempfile
import unittest
from unittest import mock

from kit_helpers import ON_SHIPPED, ROOT, SHIPPED_DOCUMENTS, assert_same_in_a_process, code_fingerprint, read_measured, run_kit, run_main, write_temp
import bench
import grounding_eval
from grounding_eval import (DOCUMENT_SETS, FLAGGED, catch_rate, errors_caught, evaluate, faithful_flagged, holdout_figures,
                            load_cases, load_holdout, rule_figures)

import retrieval_qa
from model_reply_assistant import one_line
from retrieval_qa import check_grounding, load_documents, numbers_in, retrieve, split_sentences


def problems_of(draft, sources, hits, question=""):
    """只看会改变状态的问题（needs_review / rejected 的 problems）。"""
    return check_grounding(draft, sources, hits, question)["problems"]


def guessed(problem, ids):
    """没写依据的草稿：说到引文的问题后面照规则加上“引文是猜的”这句说明（retrieval_qa.GUESSED）。"""
    return problem + retrieval_qa.GUESSED.format(ids)


def amount_problem(shown, ids, claim, same=None):
    """没写依据的草稿里，引用的片段撑不住的数量（misstated_amount 和片段全文比时的写法）；same：片段里同一个数带着别的单位。"""
    return f"「{shown}」和依据对不上：引用的片段 {ids} 里没有" + (f"，那里的 {same}" if same else "") + f"（草稿「{one_line(claim, 31)}」）"


def hit(hit_id, text, title="标题"):
    return {"id": hit_id, "title": title, "text": text, "matched": []}


TRIAL = hit("T1", "新注册的团队可以开通体验版，试用期 7 天；这段时间里能使用资料检索和回复草稿两项功能。", "产品规则 · 试用")
SENDING = hit("S1", "助手只负责写回复草稿，从不自动发送；每一条回复都要由客服人员检查后亲手发出。", "产品规则 · 发送边界")
SERVER = hit("V1", "私有部署需要一台 4 核 CPU、8 GB 内存的服务器，另外为资料索引预留 50 GB 磁盘空间。", "部署说明")


class NumberTest(unittest.TestCase):
    def test_integers_decimals_percentages_and_full_width_digits(self):
        self.assertEqual(numbers_in("试用 ７ 天，增长 12.50%，价格 3.0 元，版本 V4"), {"7", "12.5%", "3", "4"})

    def test_chinese_numerals_with_a_measure_word(self):
        self.assertEqual(numbers_in("七天、十四天、两项、一百零五个、二十台"), {"7", "14", "2", "105", "20"})

    def test_a_lone_yi_is_not_a_number(self):
        self.assertEqual(numbers_in("这是一个问题，需要一台服务器"), set())
        self.assertEqual(numbers_in("试用一个月"), {"1"})   # 计时、计钱的单位前面，“一”是数

    def test_changed_number_is_named_with_the_cited_ids(self):
        self.assertEqual(problems_of("体验版的试用期是 30 天。", ["T1"], [TRIAL]), [amount_problem("30 天", "T1", "体验版的试用期是 30 天")])
        problems = problems_of("试用 7 天，服务器要 16 GB 内存。", ["T1", "V1"], [TRIAL, SERVER])
        self.assertIn(amount_problem("16 GB", "T1、V1", "服务器要 16 GB 内存"), problems)

    def test_a_number_borrowed_from_another_cited_chunk_is_caught(self):
        problems = problems_of("您好，体验版的试用期是 50 天，期间可以使用资料检索和回复草稿功能。", ["T1", "V1"],
                               [TRIAL, SERVER])
        # 50 只在 V1 里、而且是 50 GB：数量连同单位比较，说出片段里的 50 是什么
        self.assertEqual(problems, [amount_problem("50 天", "T1、V1", "体验版的试用期是 50 天", "50 是「50 GB」")])

    def test_one_sentence_may_use_numbers_from_two_cited_chunks(self):
        draft = "可以。体验版试用期为 7 天；私有部署需要一台 4 核 CPU、8 GB 内存的服务器，并预留 50 GB 磁盘空间。"
        self.assertEqual(problems_of(draft, ["T1", "V1"], [TRIAL, SERVER]), [])

    def test_same_value_written_differently_is_supported(self):
        self.assertEqual(problems_of("体验版可以试用七天。", ["T1"], [TRIAL]), [])
        self.assertEqual(problems_of("体验版可以试用 7.0 天。", ["T1"], [TRIAL]), [])
        self.assertEqual(problems_of("体验版可以试用 ７ 天。", ["T1"], [TRIAL]), [])

    def test_an_exact_unit_conversion_is_the_same_amount(self):
        # 换算得过来的是同一个量（7 天 = 168 小时 = 一周），换算不对的照样指出
        self.assertEqual(problems_of("体验版可以试用 168 小时。", ["T1"], [TRIAL]), [])
        self.assertEqual(problems_of("体验版可以试用 100 小时。", ["T1"], [TRIAL]), [amount_problem("100 小时", "T1", "体验版可以试用 100 小时")])

    def test_percent_needs_a_percent_in_the_source(self):
        growth = hit("G1", "续费率提高到 50%，新客户增长 30 家。")
        self.assertEqual(problems_of("续费率达到 50%。", ["G1"], [growth]), [])
        self.assertEqual(problems_of("新客户增长了 30%。", ["G1"], [growth]), [amount_problem("30%", "G1", "新客户增长了 30%", "30 是「30 家」")])

    def test_chunk_ids_in_the_draft_are_not_numbers(self):
        sample = hit("D01#1", TRIAL["text"])
        self.assertEqual(problems_of("根据 D01#1，体验版试用期 7 天。", ["D01#1"], [sample]), [])


class QuoteTest(unittest.TestCase):
    def test_exact_quote_after_normalising_space_punctuation_and_case(self):
        self.assertEqual(problems_of("原文写的是「试用期7天」。", ["T1"], [TRIAL]), [])
        self.assertEqual(problems_of("部署说明：“4 核 cpu、8 gb 内存”", ["V1"], [SERVER]), [])

    def test_all_three_quote_styles_are_checked(self):
        for quote in ("「试用期三十天」", "『试用期三十天』", "“试用期三十天”"):
            with self.subTest(quote=quote):
                problems = problems_of(f"原文：{quote}", ["T1"], [TRIAL])
                self.assertTrue(any(p.startswith("引文在 T1 里找不到：「试用期三十天」") for p in problems), problems)

    def test_near_quote_needs_a_person(self):
        problems = problems_of("规则说“助手只负责写回复草稿，从不主动发送”。", ["S1"], [SENDING])
        self.assertEqual(len(problems), 1)
        self.assertTrue(problems[0].startswith("引文在 S1 里近似，需对照原文：「助手只负责写回复草稿，从不主动发送」"), problems[0])

    def test_changed_number_inside_a_quote_is_a_problem_however_similar(self):
        draft = "文档要求：「私有部署需要一台 4 核 CPU、16 GB 内存的服务器」"
        problems = problems_of(draft, ["V1"], [SERVER])
        self.assertEqual(len([p for p in problems if p.startswith("引文在 V1 里近似")]), 1, problems)
        self.assertIn(amount_problem("16 GB", "V1", "私有部署需要一台 4 核 CPU、16 GB 内存的服务器"), problems)

    def test_swapped_numbers_that_both_exist_are_still_caught_by_the_quote(self):
        problems = problems_of("「私有部署需要一台 8 核 CPU、4 GB 内存的服务器」", ["V1"], [SERVER])
        self.assertTrue(any(p.startswith("引文在 V1 里近似") for p in problems), problems)

    def test_a_quoted_link_is_checked_as_a_link_not_as_an_empty_quote(self):
        source = hit("L1", "详情见 http://example.com/help 页面。")
        self.assertEqual(problems_of("详情见「http://example.com/help」。", ["L1"], [source]), [])

    def test_quote_not_in_the_source(self):
        problems = problems_of("资料说「试用期是一个月」。", ["T1"], [TRIAL])
        self.assertTrue(any(p.startswith("引文在 T1 里找不到：「试用期是一个月」") for p in problems), problems)
        self.assertIn(amount_problem("一个月", "T1", "试用期是一个月"), problems)   # “一个月”是 1 个月：计时的单位前，“一”也是数字


class SentenceTest(unittest.TestCase):
    def test_split_keeps_decimals_and_abbreviations(self):
        self.assertEqual(split_sentences("版本 3.5 很好。e.g. this one. Next sentence!\n最后一句"),
                         ["版本 3.5 很好。", "e.g. this one.", "Next sentence!", "最后一句"])

    def test_short_lead_in_is_skipped(self):
        self.assertEqual(problems_of("资料 [2] 提到：", ["T1"], [TRIAL]), [])

    def test_thresholds_are_named_constants(self):
        self.assertEqual((retrieval_qa.CLAUSE_MATCH, retrieval_qa.QUOTE_NEAR, retrieval_qa.RELIABLE), (0.5, 0.85, 0.75))   # 课文写的就是这几个数

    def test_an_invented_sentence_without_numbers_is_a_hint_named_by_its_first_30_characters(self):
        # 没有数量、条件、出处可以指的编造只作提示（第 04 课：判定只来自程序指得出的东西）
        draft = "体验版试用期 7 天。另外我们为每位新客户都提供一对一的上门培训服务和全天候的电话支持，欢迎随时联系。"
        verdict = check_grounding(draft, ["T1"], [TRIAL])
        self.assertEqual(verdict["status"], "draft")
        self.assertEqual(verdict["hints"], ["这个分句没有依据，片段里也没有像它的话：「另外我们为每位新客户都提供一对一的上门培训服务和全天候的电话…」"])

    def test_fact_cited_to_the_wrong_hit_names_the_better_one(self):
        problems = problems_of("不会自动发送，每一条回复都要由客服人员检查后亲手发出。", ["V1"], [SENDING, SERVER])
        self.assertEqual(problems, ["「不会自动发送」在引用的片段 V1 里找不到，更像来自 S1：「从不自动发送」",
                                    "「每一条回复都要由客服人员检查后亲手发出」在引用的片段 V1 里找不到，更像来自 S1："
                                    "「每一条回复都要由客服人员检查后亲手发出」"])

    def test_no_better_hit_no_suggestion(self):
        verdict = check_grounding("部署完成后系统会在每天晚上自动批量发送所有回复。", ["S1"], [SENDING, SERVER])
        self.assertEqual((verdict["status"], len(verdict["hints"])), ("draft", 1), verdict)
        self.assertTrue(verdict["hints"][0].startswith("这个分句没有依据，片段里也没有像它的话"), verdict)
        self.assertNotIn("更像来自", verdict["hints"][0])

    def test_faithful_paraphrase_passes(self):
        self.assertEqual(problems_of("您好，体验版的试用期是 7 天，试用期间可以使用资料检索和回复草稿功能。",
                                         ["T1"], [TRIAL]), [])


def refuse_getpass(*args, **kwargs):
    raise AssertionError("--check-draft 不该读取密钥")


def check_draft(question, answer, *extra, raw=None):
    """在进程内运行 --check-draft（没有密钥；一读密钥就算失败），返回 (退出码, 输出对象, stderr)。
    真正的新进程里跑一遍的检查见 test_unreadable_file_is_a_rejected_answer。"""
    with tempfile.TemporaryDirectory() as directory, mock.patch("getpass.getpass", refuse_getpass):
        path = write_temp(directory, "answer.json", raw if raw is not None else json.dumps(answer, ensure_ascii=False))
        code, out, err = run_main(retrieval_qa, [question, "--check-draft", str(path), *ON_SHIPPED, *extra])
    return code, json.loads(out) if out else None, err


class CheckDraftTest(unittest.TestCase):
    def test_faithful_draft_passes_and_lists_uncited_hits(self):
        answer = {"status": "draft", "draft": "不会自动发送，每一条回复都要由客服人员检查后亲手发出。", "sources": ["D01#2"]}
        code, result, err = check_draft("部署后会自动发送吗？", answer)
        self.assertEqual(code, 0, err)
        self.assertEqual((result["status"], result["model_called"], result["problems"]), ("draft", False, []))
        self.assertEqual(result["uncited_hits"], ["D02#1"])
        self.assertIn("不调用模型，不读取密钥", err)

    def test_thirty_days_citing_d01_1_needs_review_and_names_the_number(self):
        answer = {"status": "draft", "draft": "体验版的试用期是 30 天。", "sources": ["D01#1"]}
        code, result, _ = check_draft("试用几天？", answer)
        self.assertEqual((code, result["status"]), (1, "needs_review"))
        self.assertEqual(result["draft"], "体验版的试用期是 30 天。")   # 草稿照样给人看
        self.assertEqual(result["problems"], [amount_problem("30 天", "D01#1", "体验版的试用期是 30 天")])

    def test_d02_1_cited_for_a_fact_from_d01_2_names_the_better_chunk(self):
        answer = {"status": "draft", "draft": "不会自动发送，每一条回复都要由客服人员检查后亲手发出。", "sources": ["D02#1"]}
        code, result, _ = check_draft("部署后会自动发送吗？", answer)
        self.assertEqual((code, result["status"]), (1, "needs_review"))
        self.assertIn("更像来自 D01#2", result["problems"][0])

    def test_hard_rules_still_come_first(self):
        answer = {"status": "draft", "draft": "体验版的试用期是 7 天。", "sources": ["D04#1"]}
        code, result, _ = check_draft("试用几天？", answer)
        self.assertEqual((code, result["status"], result["draft"]), (4, "rejected", None))
        self.assertIn("来源「D04#1」不在这次发送的资料里", result["problems"][0])

    def test_missing_is_not_grounded(self):
        answer = {"status": "missing", "draft": "资料里没有 30 天的说法。", "sources": []}
        code, result, _ = check_draft("试用几天？", answer)
        self.assertEqual((code, result["status"], result["uncited_hits"]), (0, "missing", ["D01#1"]))

    def test_non_json_file_is_a_rejected_answer_with_the_position(self):
        code, result, _ = check_draft("试用几天？", None, raw='{"status": "draft", "draft": "7 天",}')
        self.assertEqual((code, result["status"]), (4, "rejected"))
        self.assertEqual(result["problems"], ["回答不是单个 JSON 对象（第 1 行第 35 列：这里多了一个逗号。"
                                              "数组或对象的最后一项后面不能再写逗号，删掉它）"])

    def test_answer_file_mistakes_get_the_same_hints_as_the_documents(self):
        code, result, _ = check_draft("试用几天？", None, raw='{"status": "draft"，"draft": "7 天", "sources": ["D01#1"]}')
        self.assertEqual(code, 4)
        self.assertIn("全角字符「，」", result["problems"][0])

    def test_markers_and_list_numbers_are_not_facts(self):
        for draft in ("资料 [2] 提到，体验版的试用期是 7 天 [1]。", "您好：\n1. 体验版的试用期是 7 天。\n2. 期间可以用资料检索。",
                      "① 体验版的试用期是 7 天。"):
            with self.subTest(draft=draft):
                code, result, _ = check_draft("试用几天？", {"status": "draft", "draft": draft, "sources": ["D01#1"]})
                self.assertFalse(any(p.startswith("数字") for p in result["problems"]), result["problems"])

    def test_very_long_drafts_go_to_a_person(self):
        draft = "体验版的试用期是 7 天。" * 200
        code, result, _ = check_draft("试用几天？", {"status": "draft", "draft": draft, "sources": ["D01#1"]})
        self.assertEqual((code, result["problems"]), (1, [f"草稿有 {len(draft)} 个字，超过逐句核对的上限 2000 字，请人工复核"]))

    def test_repeated_problems_are_listed_once(self):
        draft = "资料说「试用期三十天」。" * 5
        code, result, _ = check_draft("试用几天？", {"status": "draft", "draft": draft, "sources": ["D01#1"]})
        self.assertEqual(len([p for p in result["problems"] if p.startswith("引文在 D01#1 里找不到：「试用期三十天」")]), 1, result["problems"])

    def test_unreadable_file_is_a_rejected_answer(self):
        with tempfile.TemporaryDirectory() as directory:   # 在本进程里跑（看到的和子进程一样，见 SameInAProcessTest）
            code, out, err = run_kit(["试用几天？", "--check-draft", f"{directory}/none.json"])
        result = json.loads(out)
        self.assertEqual((code, result["status"], result["model_called"]), (4, "rejected", False))
        self.assertTrue(result["problems"][0].startswith("读不了回答文件 "), result["problems"])
        self.assertNotIn("Traceback", err)

    def test_zero_hits_checks_nothing(self):
        code, result, _ = check_draft("价格是多少？", {"status": "draft", "draft": "99 元", "sources": ["D01#1"]})
        self.assertEqual((code, result["status"], result["model_called"]), (0, "no_hits", False))

    def test_cannot_be_combined_with_retrieve_only(self):
        code, result, err = check_draft("试用几天？", {}, "--retrieve-only")
        self.assertEqual((code, result), (2, None))
        self.assertIn("--retrieve-only 和 --check-draft 不能同时使用", err)


# ---------- 出处核对：数量连同单位、意思说反、条件词、日期时间、链接、正文里的编号、追加的分句 ----------

PARCEL = hit("P1", "声明价值不超过 1,000 元的包裹免费保价；超过 1,000 元的，按声明价值的 0.5% 收取保价费。", "保价")
PICKUP = hit("P2", "工作日 17:00 之前下单，当天上门取件；可在小程序取消或拨打客服电话取消。", "取件")
HOURS = hit("H1", "营业时间为周一至周五 9:00–21:00，周六、周日 10:00–18:00；3 月 1 日起调整。", "营业时间")
CARDS = hit("C1", "月卡 299 元，季卡 799 元，每位会员每月可带 1 位朋友。", "价格")
LINKED = hit("L1", "完整条款见 https://help.example.com/trial-terms 页面。", "条款")


class QuantityTest(unittest.TestCase):
    def test_a_changed_unit_is_named_with_both_spellings(self):
        self.assertEqual(problems_of("体验版的试用期是 7 周。", ["T1"], [TRIAL]),
                         [amount_problem("7 周", "T1", "体验版的试用期是 7 周", "7 是「7 天」")])

    def test_one_week_is_seven_days_but_two_weeks_are_not(self):
        self.assertEqual(problems_of("体验版可以试用一周。", ["T1"], [TRIAL]), [])
        self.assertEqual(problems_of("体验版可以试用两周。", ["T1"], [TRIAL]),
                         [amount_problem("两周", "T1", "体验版可以试用两周", "2 是「两项」")])   # 2 这个数片段里有，单位不同：照实说它是什么

    def test_a_percentage_in_chinese_numerals_is_compared(self):
        # 草稿用中文写的数，问题里照原样说出来（学生在草稿里找得到“百分之二十”，找不到“20%”）
        self.assertEqual(problems_of("按声明价值的百分之二十收取保价费。", ["P1"], [PARCEL]),
                         [amount_problem("百分之二十", "P1", "按声明价值的百分之二十收取保价费")])

    def test_numbers_swapped_between_nouns_are_caught(self):
        problems = problems_of("私有部署需要一台 8 核 CPU、4 GB 内存的服务器。", ["V1"], [SERVER])
        self.assertIn(amount_problem("8 核", "V1", "私有部署需要一台 8 核 CPU", "8 是「8 GB」"), problems)
        self.assertIn(amount_problem("4 GB", "V1", "4 GB 内存的服务器", "4 是「4 核」"), problems)
        # 新手试读：草稿写“试用 30 天”，片段里 30 只出现在价格“30元”里：说清片段里的 30 是什么
        self.assertEqual(problems_of("专业版可以免费试用 30 天。", ["W1"], [hit("W1", "专业版 30元/月，新用户可免费试用 14天。", "价格")]),
                         [amount_problem("30 天", "W1", "专业版可以免费试用 30 天", "30 是「30元」")])
        self.assertEqual(problems_of("季卡 299 元。", ["C1"], [CARDS]),
                         [guessed("数量「299 元」在引文对应的那一句里是「799 元」：草稿「季卡 299 元」，引文「季卡 799 元」", "C1")])

    def test_other_spellings_of_the_same_value_are_equal(self):
        for draft in ("声明价值不超过 1000 元的包裹免费保价。", "声明价值不超过 １,０００ 元的包裹免费保价。",
                      "超过一千元的，按声明价值的 0.50% 收取保价费。"):
            with self.subTest(draft=draft):
                self.assertEqual(problems_of(draft, ["P1"], [PARCEL]), [])
        self.assertEqual(problems_of("营业时间调整从 03 月 01 日开始。", ["H1"], [HOURS]), [])
        self.assertEqual(problems_of("工作日 17:00 之前下单的，当天上门取件。", ["P2"], [PICKUP]), [])
        self.assertEqual(problems_of("周六、周日营业到晚上 6:00。", ["H1"], [HOURS]), [])   # 晚上 6:00 就是 18:00


class SpellingAndContextTest(unittest.TestCase):
    """同一件事的别种写法、问题里本来就有的数、说的是原文里另一样东西：都不算对不上。"""

    def test_iso_dates_and_part_of_day_clocks_are_read_as_values(self):
        self.assertEqual(problems_of("营业时间从 2026-03-01 起调整。", ["H1"], [hit("H1", "营业时间 2026 年 3 月 1 日起调整。")]), [])
        self.assertEqual(problems_of("营业时间从 2026-04-01 起调整。", ["H1"], [hit("H1", "营业时间 2026 年 3 月 1 日起调整。")]),
                         [amount_problem("2026-04-01", "H1", "营业时间从 2026-04-01 起调整")])
        live = hit("K1", "直播课每周二 20:00–21:30 上课。")
        self.assertEqual(problems_of("直播课每周二晚上 8 点开始，9 点半下课。", ["K1"], [live]), [])   # 9 点半 也可以是 21:30

    def test_a_bit_is_not_one_oclock_and_age_is_not_weeks(self):
        dental = hit("T5", "浅龋补牙一般不需要麻醉；需要局部麻醉的，每次加收 80 元。")
        self.assertEqual(problems_of("浅一点的龋齿不需要打麻药；需要局部麻醉的话，每次加收 80 元。", ["T5"], [dental]), [])
        self.assertIn(amount_problem("凌晨一点", "T5", "凌晨一点也可以来补牙"), problems_of("凌晨一点也可以来补牙。", ["T5"], [dental]))
        senior = hit("K9", "60 周岁以上老人购买普通座享 8 折。")
        self.assertEqual(problems_of("60 岁以上的老人买普通座打八折。", ["K9"], [senior]), [])   # 周岁就是岁，不是星期
        self.assertEqual(problems_of("70 周岁以上的老人买普通座打八折。", ["K9"], [senior]),
                         [amount_problem("70 周岁", "K9", "70 周岁以上的老人买普通座打八折")])

    def test_the_customers_own_dates_times_and_units_count_as_given(self):
        night = hit("W5", "每天 1:30 至 9:00 暂停配送，可以下预约单。")
        self.assertEqual(problems_of("凌晨两点在暂停配送的时段里，可以下预约单。", ["W5"], [night], "凌晨两点还能点外卖吗？"), [])
        self.assertIn(amount_problem("凌晨两点", "W5", "凌晨两点在暂停配送的时段里"), problems_of("凌晨两点在暂停配送的时段里。", ["W5"], [night]))
        cloud = hit("W2", "超级会员月付 30 元，年付 298 元。")
        self.assertEqual(problems_of("按月付 30 元 × 12 个月 = 360 元，年付 298 元。", ["W2"], [cloud], "年付比月付一年省多少？"), [])
        kids = hit("F4", "身高 1.2 米以下的儿童由成人陪同可免票。")
        self.assertEqual(problems_of("身高 120 厘米以下的儿童由成人陪同可以免票。", ["F4"], [kids]), [])

    def test_a_clock_time_one_step_from_another_is_computed(self):
        park = hit("L3", "开放时间 9:00–21:00，闭园前 1 小时停止入园。")
        self.assertEqual(problems_of("开放到晚上九点，闭园前 1 小时停止入园，也就是晚上八点以后不能入园。", ["L3"], [park]), [])
        self.assertIn(amount_problem("晚上七点", "L3", "也就是晚上七点以后不能入园"),
                      problems_of("开放到晚上九点，闭园前 1 小时停止入园，也就是晚上七点以后不能入园。", ["L3"], [park]))

    def test_chinese_hours_and_iso_dates_match_their_other_spellings(self):
        hours = hit("W3", "每天 9:00 开始配送，到次日 1:30 结束；活动时间 2025-06-18 至 2025-06-20。")
        self.assertEqual(problems_of("每天上午九点开始配送，一直到次日凌晨 01:30。", ["W3"], [hours]), [])
        self.assertEqual(problems_of("活动时间是 2025 年 6 月 18 日至 6 月 20 日。", ["W3"], [hours]), [])

    def test_the_longest_condition_word_wins(self):
        night = hit("S1", "科目三不少于 24 学时，其中夜间驾驶不少于 2 学时。")
        self.assertEqual(problems_of("夜间驾驶至少 2 学时。", ["S1"], [night]), [])   # 不少于 = 至少：都是“以上”一类

    def test_a_number_the_customer_gave_may_be_repeated(self):
        boarding = hit("B1", "体重 10 公斤及以上的狗寄养每天 120 元。")
        self.assertEqual(problems_of("15 公斤的狗寄养每天 120 元。", ["B1"], [boarding], "寄养一只 15 公斤的狗多少钱？"), [])
        self.assertEqual(problems_of("15 公斤的狗寄养每天 120 元。", ["B1"], [boarding]), [amount_problem("15 公斤", "B1", "15 公斤的狗寄养每天 120 元")])

    def test_a_one_step_calculation_is_accepted_only_where_the_draft_shows_it(self):
        tickets = hit("F1", "21:30 以后开场的夜场一律 39 元一张。")
        self.assertEqual(problems_of("夜场 39 元一张，两张一共 78 元。", ["F1"], [tickets], "夜场两张票多少钱？"), [])
        self.assertEqual(problems_of("夜场 39 元一张，两张一共 80 元。", ["F1"], [tickets], "夜场两张票多少钱？"),
                         [guessed("「80 元」和依据对不上：按引文的数一步算，最接近的是 39 × 2 = 78（草稿「两张一共 80 元」）", "F1")])
        # 没有“一共”“=”这类算账的字样，算得出来的数也不放过：“试用 14 天”不能因为 7 × 2 = 14 就算对
        self.assertEqual(problems_of("体验版试用期 14 天，能用两项功能。", ["T1"], [TRIAL]), [amount_problem("14 天", "T1", "体验版试用期 14 天")])
        fee = hit("B2", "提前解约按剩余月数月费总额的 30% 收取违约金。")
        problems = problems_of("10 × 79 = 790 元，790 × 30% = 237 元，所以违约金是 237 元。", ["B2"], [fee],
                               "还剩 10 个月，月费 79 元，违约金多少？")
        self.assertEqual(problems, [])

    def test_a_customer_number_may_come_back_with_another_measure_word(self):
        group = hit("F2", "20 人以上的团体购票享 85 折。")
        problems = problems_of("20 人以上可以享受 85 折，您这 25 人符合条件。", ["F2"], [group],
                                   "公司 25 个人想团体购票，有优惠吗？")
        self.assertEqual([p for p in problems if p.startswith("数字")], [], problems)

    def test_an_indefinite_yi_is_not_the_number_one(self):
        problems = problems_of("周三下午不接待初诊，可以换一天来。", ["V1"], [hit("V1", "周三下午不接待初诊。")])
        self.assertFalse([p for p in problems if p.startswith("数字")], problems)   # “换一天来”是建议（另有分句检查），不是 1 天

    def test_another_item_in_the_same_list_is_not_a_changed_amount(self):
        prices = hit("M1", "iPhone 15 原装屏幕更换 1,899 元，iPhone 14 为 1,599 元。")
        self.assertEqual(problems_of("iPhone 14 原装屏幕更换 1,599 元。", ["M1"], [prices]), [])

    def test_a_negation_must_govern_the_same_thing(self):
        member = hit("K9", "年度会员可以学习全部录播课，直播课不包含在内。")
        self.assertEqual(problems_of("年度会员包含的是全部录播课，直播课不在会员范围内。", ["K9"], [member]), [])
        bath = hit("V7", "最后一针打完后 7 天内不能洗澡。")
        self.assertEqual(problems_of("最后一针打完后 7 天内就可以洗澡了。", ["V7"], [bath]),
                         [guessed("意思说反了（「洗澡」）：草稿「最后一针打完后 7 天内就可以洗澡了」，引文「最后一针打完后 7 天内不能洗澡」", "V7")])


class DateTimeTest(unittest.TestCase):
    def test_changed_time_date_and_weekday_are_named(self):
        self.assertEqual(problems_of("周六、周日 10:00–19:00 营业。", ["H1"], [HOURS]), [amount_problem("19:00", "H1", "周日 10:00–19:00 营业")])
        self.assertEqual(problems_of("营业时间从 4 月 1 日起调整。", ["H1"], [HOURS]), [amount_problem("4 月 1 日", "H1", "营业时间从 4 月 1 日起调整")])

    def test_a_weekday_inside_a_range_is_supported(self):
        self.assertEqual(problems_of("周三也营业，9:00–21:00。", ["H1"], [HOURS]), [])


class PolarityTest(unittest.TestCase):
    def test_a_negation_added_or_removed_is_shown_with_both_wordings(self):
        # 没写依据：草稿的分句和片段里最像它的分句配成一对，两边都照原样给出
        self.assertEqual(problems_of("新注册的团队不可以开通体验版。", ["T1"], [TRIAL]),
                         [guessed("意思说反了（「开通」）：草稿「新注册的团队不可以开通体验版」，引文「新注册的团队可以开通体验版」", "T1")])
        self.assertEqual(problems_of("助手会自动发送。", ["S1"], [SENDING]),
                         [guessed("意思说反了（「自动」）：草稿「助手会自动发送」，引文「从不自动发送」", "S1")])

    def test_the_same_negation_in_other_words_passes(self):
        self.assertEqual(problems_of("助手不会自动发送回复，每一条都要客服人员检查后亲手发出。", ["S1"], [SENDING]), [])


class ConditionTest(unittest.TestCase):
    def test_opposite_condition_words_are_named(self):
        def changed(theirs, mine, draft, quote, ids):   # condition_unlike_quote 的写法：两边的分句都截到 21 个字以内
            return guessed(f"条件变了（引文是“{theirs}”，草稿写成“{mine}”）：草稿「{one_line(draft, 21)}」，引文「{one_line(quote, 21)}」", ids)
        self.assertEqual(problems_of("声明价值超过 1,000 元的包裹免费保价。", ["P1"], [PARCEL]),
                         [changed("不超过", "超过", "声明价值超过 1,000 元的包裹免费保价", "声明价值不超过 1,000 元的包裹免费保价", "P1")])
        self.assertEqual(problems_of("工作日 17:00 之前下单，次日上门取件。", ["P2"], [PICKUP]), [changed("当天", "次日", "次日上门取件", "当天上门取件", "P2")])
        self.assertEqual(problems_of("可在小程序取消并且拨打客服电话取消。", ["P2"], [PICKUP]),
                         [changed("或", "并且", "可在小程序取消并且拨打客服电话取消", "可在小程序取消或拨打客服电话取消", "P2")])
        self.assertEqual(problems_of("每位会员每周可带 1 位朋友。", ["C1"], [CARDS]),
                         [changed("每月", "每周", "每位会员每周可带 1 位朋友", "每位会员每月可带 1 位朋友", "C1")])


    def test_a_universal_word_against_a_limit_elsewhere_in_the_chunk_is_named(self):
        repair = hit("H4", "小家电支持寄修，保修期内往返运费由厂家承担。大家电仅提供上门维修。")
        problems = problems_of("所有家电都支持寄修，保修期内往返运费由厂家承担。", ["H4"], [repair])
        self.assertTrue(any(p.startswith("原文有限定「仅」，草稿却说「所有」") for p in problems), problems)
        tickets = hit("L1", "所有门票须实名预约，每个证件每天限购 5 张。")   # 片段自己也说“所有”：不算丢了限定
        self.assertEqual(problems_of("所有门票须实名预约。", ["L1"], [tickets]), [])
        # 原文给那样东西加了定语：说出整个定语（“新注册的团队”），不是截下来的两个字（“册的团队”）
        trial = hit("D01#1", "新注册的团队可以开通体验版，试用期 7 天；这段时间里能使用资料检索和回复草稿两项功能。")
        problems = problems_of("所有团队都可以试用 7 天。", ["D01#1"], [trial])
        self.assertTrue(any(p.startswith("原文有限定「新注册的团队」，草稿却说「所有」") for p in problems), problems)

class AppendedClauseTest(unittest.TestCase):
    def test_an_invented_clause_cannot_ride_on_a_supported_sentence(self):
        # 追加的分句带着片段里没有的数量：要人看；没有数量、条件可以指的编造只作提示
        verdict = check_grounding("新注册的团队可以开通体验版，试用期 7 天，须提前一天预约开通。", ["T1"], [TRIAL])
        self.assertEqual(verdict["problems"], [amount_problem("一天", "T1", "须提前一天预约开通")])
        verdict = check_grounding("新注册的团队可以开通体验版，试用期 7 天，另外赠送专属客户经理服务。", ["T1"], [TRIAL])
        self.assertEqual((verdict["status"], verdict["hints"]), ("draft", ["这个分句没有依据，片段里也没有像它的话：「另外赠送专属客户经理服务」"]))

    def test_a_draft_with_hints_is_not_called_fully_found(self):
        # 状态是 draft、却有一处提示“找不到依据”：stderr 和 note 不能说“句子都能在引用的片段里找到”，那和提示自相矛盾
        with tempfile.TemporaryDirectory() as directory:
            path = write_temp(directory, "hint.json", json.dumps(
                {"status": "draft", "draft": "体验版可以免费试用 7 天，另外赠送专属客户经理服务。", "sources": ["D01#1"]}, ensure_ascii=False))
            code, out, err = run_kit(["试用几天？", "--check-draft", str(path), *ON_SHIPPED])
        result = json.loads(out)
        self.assertEqual((code, result["status"], len(result["hints"])), (0, "draft", 1), err)
        self.assertNotIn("都能在引用的片段里找到", err + result["note"])
        self.assertIn("hints 里的几处请再看一眼", result["note"])

    def test_courtesy_and_echoing_the_question_are_not_facts(self):
        self.assertEqual(problems_of("您好，体验版的试用期是 7 天。如果还有其他问题，欢迎随时咨询。", ["T1"], [TRIAL]), [])
        self.assertEqual(problems_of("部署以后也不会自动发送，每一条回复都要由客服人员检查后亲手发出。", ["S1"], [SENDING],
                                         "部署后会自动发送吗？"), [])

    def test_clauses_that_swap_who_does_what_are_beyond_the_check(self):
        # 第 04 课“核对证明不了的”：两个分句对调了谁做什么（没写“由…承担”），每个分句都配得上片段里的一句，程序看不出来
        verdict = check_grounding("客服人员只负责写回复草稿，从不自动发送；每一条回复都要由助手检查后亲手发出。", ["S1"], [SENDING])
        self.assertEqual((verdict["status"], verdict["problems"]), ("draft", []))


class LinkTest(unittest.TestCase):
    def test_a_link_must_equal_a_link_in_the_cited_chunk(self):
        self.assertEqual(problems_of("完整条款见 https://help.example.com/trial-terms。", ["L1"], [LINKED]), [])
        self.assertEqual(problems_of("完整条款见 help.example.com/trial-terms 页面。", ["L1"], [LINKED]), [])
        for link in ("https://help.example.com/trial", "https://help.example.co", "http://help.example.com/trial-terms"):
            with self.subTest(link=link):
                self.assertEqual(problems_of(f"完整条款见 {link} 页面。", ["L1"], [LINKED]),
                                 [f"链接 {link} 不在引用的片段 L1 里：「{one_line(f'完整条款见 {link} 页面。', 31)}」"])


class HardRuleV2Test(unittest.TestCase):
    """正文里的编号和没有内容的草稿是第 02 课的硬规则：整份回答被拒绝（退出码 4），理由和越界引用一样。"""

    def check(self, draft, question="试用几天？"):
        with tempfile.TemporaryDirectory() as directory:
            path = write_temp(directory, "answer.json",
                              json.dumps({"status": "draft", "draft": draft, "sources": ["D01#1"]}, ensure_ascii=False))
            code, out, _ = run_main(retrieval_qa, [question, "--check-draft", str(path)] + ON_SHIPPED)
        return code, json.loads(out)

    def test_an_id_marker_of_a_chunk_that_was_not_sent_is_rejected(self):
        for draft in ("体验版试用期 7 天 [D04#1]。", "体验版试用期 7 天【Ｄ04＃1】。"):
            with self.subTest(draft=draft):
                code, result = self.check(draft)
                self.assertEqual((code, result["status"]), (4, "rejected"))
                self.assertEqual(result["problems"], ["来源「D04#1」不在这次发送的资料里（只允许 D01#1）"])

    def test_citation_numbers_and_sent_ids_in_the_text_are_fine(self):
        for draft in ("体验版试用期 7 天 [1]。", "体验版试用期 7 天 [D01#1]。"):
            with self.subTest(draft=draft):
                self.assertEqual(self.check(draft)[1]["status"], "draft")

    def test_a_draft_without_letters_or_digits_is_rejected(self):
        for draft, shown in (("。。。！", "。。。！"), ("\u200b\u200b \u200b", "\\u200b\\u200b \\u200b"), ("……", "……")):
            with self.subTest(draft=repr(draft)):
                code, result = self.check(draft)
                self.assertEqual((code, result["status"]), (4, "rejected"))
                self.assertEqual(result["problems"][0], f"draft 「{shown}」里没有字或数字：只有标点，或零宽字符、方向标记这样看不见的字符")


@functools.lru_cache(maxsize=None)
def measured():
    """(标注集的结果, 留出集的结果)：几组检查共用，只量一次。"""
    cases, documents = load_holdout()
    return evaluate(), evaluate(cases, documents)


class MeasuredFileTest(unittest.TestCase):
    """checks/measured.json：下面几组检查、课文里的量具命令用的结果。它是这份代码量出来的，抽出来真的量一遍也一样。"""

    def test_the_committed_results_were_measured_on_this_code(self):
        saved = read_measured()
        self.assertIsNotNone(saved, "checks/measured.json 没有、读不了或不是量具写的样子")
        self.assertEqual(saved["fingerprint"], code_fingerprint(),
                         "代码改过了，记下的结果是旧代码的。维护者：运行 python3 checks/grounding_eval.py --save，把 checks/measured.json "
                         "一起提交。学生自己改了套件的代码时，这一项失败是正常的")

    def test_a_sample_of_every_kind_measured_again_gives_the_committed_results(self):
        """每一种记下的结果都抽：grounding_eval.py --save 量的那些，每 50 项抽一项，从哪一项抽起随代码的指纹变
        （改一次代码换一批）；第 07 课的摘录全量。"""
        saved = read_measured() or {}
        step = 50
        start = int(code_fingerprint(), 16) % step
        fresh = grounding_eval.measure_everything(lambda items: items[start::step])
        self.assertEqual(set(fresh), set(saved) - {"fingerprint"}, f"从第 {start} 项抽起")
        for kind, known in fresh.items():
            for key, value in known.items():
                with self.subTest(kind=kind, key=key, start=start):
                    self.assertEqual(saved[kind].get(key), value)


class LabelledSetTest(unittest.TestCase):
    """checks/grounding_cases.json：人工标注的回答（边写规则边用的，加上前几轮合并进来的盲测集），和程序的判定对比。"""

    @classmethod
    def setUpClass(cls):
        cls.results = measured()[0]

    def test_the_set_is_large_and_covers_every_kind(self):
        kinds = {case["kind"] for case in load_cases()}
        self.assertGreaterEqual(len(load_cases()), 1000)
        self.assertLessEqual({"faithful_copy", "faithful_paraphrase", "faithful", "changed_number", "wrong_source",
                              "polarity", "unit_change", "threshold", "date_time", "appended_condition", "swapped_subject",
                              "link_changed", "id_marker", "no_content", "wrong_arithmetic", "tier_swap", "condition_flip",
                              "role_swap", "dropped_exception", "overgeneralised", "invented_clause"}, kinds)
        self.assertGreaterEqual(len({case.get("documents") for case in load_cases()} - {None}), 10)

    def test_every_out_of_set_id_marker_and_empty_draft_is_rejected(self):
        verdicts = [r.status for r in self.results if r.case["kind"] in ("out_of_set", "id_marker", "no_content")]
        self.assertEqual(verdicts, ["rejected"] * len(verdicts))

    def test_every_changed_link_is_caught(self):
        caught, total = catch_rate(self.results, {"link_changed"})
        self.assertEqual(caught, total)

    def test_changed_numbers_and_wrong_arithmetic_are_caught(self):
        caught, total = catch_rate(self.results, {"changed_number", "laundered_number", "wrong_arithmetic"})
        self.assertGreaterEqual(caught / total, 0.9, f"{caught}/{total}")

    def guessed(self):   # 没写依据的回答：逐句去猜的那一路，守住它原来的成绩（带依据的由 test_evidence.py 管）
        return [result for result in self.results if "evidence" not in result.case["answer"]]

    def test_at_most_8_percent_of_faithful_answers_are_flagged(self):
        flagged, total = faithful_flagged(self.guessed())
        self.assertLessEqual(flagged / total, 0.08, f"{flagged}/{total}")

    def test_at_least_two_thirds_of_unfaithful_answers_are_caught(self):
        caught, total = errors_caught(self.guessed())
        self.assertGreaterEqual(caught / total, 2 / 3, f"{caught}/{total}")

    def test_faithful_copies_pass(self):
        self.assertEqual(catch_rate(self.results, {"faithful_copy"})[0], 0)

    def test_the_maintainers_readme_quotes_the_measured_figures(self):
        readme = (ROOT / "checks" / "README.md").read_text(encoding="utf-8")
        truth = [(r.case["expected"] in FLAGGED, r.status in FLAGGED) for r in self.results]
        hit = sum(1 for should, did in truth if should and did)
        flagged, should = sum(did for _, did in truth), sum(should for should, _ in truth)
        self.assertIn(f"{len(self.results)} 份人工标注回答", readme)
        self.assertIn(f"{len(json.loads(DOCUMENT_SETS.read_text(encoding='utf-8-sig')))} 个领域", readme)   # 写出来的数都要核对
        self.assertIn(f"精确率 {hit}/{flagged} = {hit / flagged:.0%}", readme)
        self.assertIn(f"召回率 {hit}/{should} = {hit / should:.0%}", readme)
        self.assertIn("如实的回答被误标 {}/{}".format(*faithful_flagged(self.results)), readme)

    def test_labels_use_the_documented_verdicts(self):
        for case in load_cases():
            self.assertIn(case["expected"], {"draft", "missing"} | FLAGGED)


# 参照：只比字面和数字的一版核对在这份留出集上，如实的回答误标 62/94
PREVIOUS_FALSE_ALARMS = (62, 94)
# 规则定下以后在这份集上只量过一次的结果（README 也写着）：误标 14/94，标出 51/79。以后改规则不能比它差
MEASURED_ONCE = {"false_alarms": 14, "caught": 51}


class HoldoutTest(unittest.TestCase):
    """checks/grounding_holdout.json：几轮盲测留下的领域、由没看过规则的人按聊天模型的写法写的回答，规则定下以后才量。
    这里守住的是：比参照的那一版误标少得多、不比只量一次时差、
    抓到至少六成、该拒绝的全拒绝。"""

    @classmethod
    def setUpClass(cls):   # 第四轮盲测的三个领域（没有 evidence）；第五轮带依据的那个领域由 test_evidence.py 管
        cases, documents = load_holdout()
        cls.cases = [case for case in cases if "evidence" not in case["answer"]]
        cls.documents = {name: documents[name] for name in {case["documents"] for case in cls.cases}}
        cls.results = [result for result in measured()[1] if "evidence" not in result.case["answer"]]

    def test_the_holdout_is_three_new_domains_written_in_chat_style(self):
        self.assertEqual(len(self.documents), 3)
        self.assertFalse(set(self.documents) & set(json.loads(DOCUMENT_SETS.read_text(encoding="utf-8-sig"))))
        self.assertGreaterEqual(len(self.cases), 150)
        faithful = [case for case in self.cases if case["expected"] == "draft"]
        chatty = [case for case in faithful if {"polite", "list", "long", "merged"} & set(case.get("styles", []))]
        self.assertGreaterEqual(len(chatty) * 2, len(faithful))
        for kind in ("changed_number", "unit_change", "wrong_arithmetic", "tier_swap", "condition_flip", "polarity",
                     "role_swap", "dropped_exception", "overgeneralised", "invented_clause", "date_time", "link_changed"):
            with self.subTest(kind=kind):
                self.assertGreaterEqual(sum(case["kind"] == kind for case in self.cases), 6)

    def test_false_alarms_are_well_below_the_previous_version(self):
        (flagged, faithful), _, _ = holdout_figures(self.results)
        self.assertLess(flagged / faithful, PREVIOUS_FALSE_ALARMS[0] / PREVIOUS_FALSE_ALARMS[1] / 3, f"{flagged}/{faithful}")

    def test_no_worse_than_when_it_was_measured_once(self):
        (flagged, _), (caught, _), _ = holdout_figures(self.results)
        self.assertLessEqual(flagged, MEASURED_ONCE["false_alarms"])
        self.assertGreaterEqual(caught, MEASURED_ONCE["caught"])

    def test_at_least_60_percent_of_unfaithful_answers_are_caught(self):
        _, (caught, subtle), _ = holdout_figures(self.results)
        self.assertGreaterEqual(caught / subtle, 0.6, f"{caught}/{subtle}")

    def test_every_answer_that_must_be_refused_is_refused(self):
        _, _, (refused, total) = holdout_figures(self.results)
        self.assertEqual(refused, total)

    def test_the_maintainers_readme_quotes_the_holdout_figures(self):
        readme = (ROOT / "checks" / "README.md").read_text(encoding="utf-8")
        (flagged, faithful), (caught, subtle), _ = holdout_figures(self.results)
        self.assertIn(f"{len(self.cases)} 份回答", readme)
        self.assertIn(f"如实的回答被误标 {flagged}/{faithful}（{flagged / faithful:.1%}）", readme)
        self.assertIn(f"不如实的回答被标出 {caught}/{subtle}（{caught / subtle:.1%}）", readme)


class RuleTableTest(unittest.TestCase):
    """规则表：每条规则一样的样子，名字说它找的毛病，表里写的实测数字就是 grounding_eval.py 量出来的。"""

    def test_every_rule_has_one_signature_and_says_what_it_catches(self):
        for rule in retrieval_qa.RULES:
            with self.subTest(rule=rule.name):
                self.assertEqual(list(inspect.signature(rule.find).parameters), ["sentence", "cited", "context"])
                self.assertTrue(rule.catches and rule.example)
        self.assertEqual(len({rule.name for rule in retrieval_qa.RULES}), len(retrieval_qa.RULES))

    def test_the_table_quotes_the_measured_figures(self):
        labelled, holdout = measured()
        for rule in retrieval_qa.RULES:
            with self.subTest(rule=rule.name):
                figures = rule_figures(labelled, rule)[:2] + rule_figures(holdout, rule)[:2]
                self.assertEqual(rule.measured, figures)

    # 级别不靠实测、按约定定的规则，和约定的理由（定它的地方在代码里写着）
    POLICIES = {"obeys_hidden_instruction": "needs_review",   # 片段里藏着指令：资料被动过手脚，一律要人看
                "no_evidence": "needs_review"}   # 依据的约定要求每句事实都有依据：缺了就是回答没守约定

    def test_the_level_follows_the_measured_precision(self):
        for rule in retrieval_qa.RULES:
            right, wrong = rule.measured[0] + rule.measured[2], rule.measured[1] + rule.measured[3]
            measured_level = "needs_review" if right > 0 and right >= retrieval_qa.RELIABLE * (right + wrong) else "hint"
            expected = "rejected" if rule.name == "unsent_id" else self.POLICIES.get(rule.name, measured_level)
            with self.subTest(rule=rule.name):
                self.assertEqual(rule.level, expected)

    def test_a_rule_nothing_has_measured_is_only_a_hint_unless_a_policy_says_otherwise(self):
        finder = lambda sentence, cited, context: []
        self.assertEqual(retrieval_qa.Rule(finder, "演示", "演示", (0, 0, 0, 0)).level, "hint")   # 0 ≥ 0.75 × 0 不算可靠
        self.assertEqual(retrieval_qa.Rule(finder, "演示", "演示", (3, 1, 0, 0)).level, "needs_review")
        self.assertEqual(retrieval_qa.Rule(finder, "演示", "演示", (2, 1, 0, 0)).level, "hint")
        self.assertEqual(retrieval_qa.Rule(finder, "演示", "演示", (0, 0, 0, 0), policy="needs_review").level, "needs_review")
        policy = [rule for rule in retrieval_qa.RULES if rule.name == "obeys_hidden_instruction"][0]
        self.assertEqual((policy.measured, policy.level), ((0, 0, 0, 0), "needs_review"))

    def test_a_hint_leaves_the_status_alone_and_is_reported(self):
        hint_rule = retrieval_qa.RULES[0]
        finder = lambda sentence, cited, context: ["看一眼这里"]
        weak = retrieval_qa.Rule(finder, "演示", "演示", (1, 9, 0, 0))
        with mock.patch.object(retrieval_qa, "RULES", [hint_rule, weak]):
            verdict = check_grounding("体验版试用期 7 天。", ["T1"], [TRIAL])
        self.assertEqual((weak.level, verdict), ("hint", {"status": "draft", "problems": [], "hints": ["看一眼这里"]}))

    def test_grounding_eval_prints_every_rule(self):
        labelled, holdout = measured()   # 量过的结果拿来用：这里只看 --rules 打印了什么，不再把两份集各核对一遍
        out = io.StringIO()
        with mock.patch.object(grounding_eval, "evaluate", lambda cases=None, documents=None, timings=None:
                               holdout if cases else labelled), contextlib.redirect_stdout(out):
            grounding_eval.main(["--rules"])
        for rule in retrieval_qa.RULES:
            self.assertIn(rule.name, out.getvalue())
        self.assertIn("只用核心规则 → 全部规则", out.getvalue())


REFUND = hit("R1", "付费版购买后 15 天内可以申请全额退款，超过 15 天不予退款。", "退款")
CLASS = hit("M1", "会员购买课程享 8 折；单笔满 1.2 万元的，另送 1 次免费体检。每晚 24:00 后不再接受预约。", "会员")


class ChatStyleTest(unittest.TestCase):
    """聊天模型的写法不算错，混着“可以”和“不予”的规则说反了要抓到，一步算出的数要核对。"""

    def test_a_courtesy_closer_is_not_a_claim(self):
        answer = {"status": "draft", "draft": "您好，体验版的试用期是 7 天。如有其他疑问，欢迎继续咨询。", "sources": ["D01#1"]}
        code, result, _ = check_draft("试用几天？", answer)
        self.assertEqual((code, result["status"], result["problems"], result["hints"]), (0, "draft", [], []))

    def test_saying_the_documents_do_not_cover_something_is_not_a_claim_but_a_claim_beside_it_is(self):
        self.assertEqual(problems_of("体验版试用期 7 天。资料里没有提到试用结束后的价格，建议咨询人工客服。", ["T1"], [TRIAL]), [])
        self.assertEqual(problems_of("资料里没有提到价格，但试用期是 30 天。", ["T1"], [TRIAL]), [amount_problem("30 天", "T1", "但试用期是 30 天")])

    def test_mixed_allow_and_refuse_rules_are_not_turned_around(self):
        self.assertEqual(problems_of("15 天内不能申请退款。", ["R1"], [REFUND]),
                         [guessed("意思说反了（「申请」）：草稿「15 天内不能申请退款」，引文「付费版购买后 15 天内可以申请全额退款」", "R1")])
        for draft, said in (("超过 15 天可以申请全额退款。", "超过"), ("15 天以后可以申请全额退款。", "以后")):
            with self.subTest(draft=draft):
                self.assertEqual(problems_of(draft, ["R1"], [REFUND]),
                                 [guessed(f"条件变了（引文是“内”，草稿写成“{said}”）：草稿「{draft.rstrip('。')}」，引文「付费版购买后 15 天内可以申请全额退款」", "R1")])
        verdict = check_grounding("一经购买，不予退款。", ["R1"], [REFUND])
        wider = next(rule for rule in retrieval_qa.RULES if rule.name == "wider_than_quote")
        self.assertEqual(verdict["status"], "needs_review" if wider.guessed_level == "needs_review" else "draft")
        self.assertTrue((verdict["problems"] + verdict["hints"])[0].startswith("原文有限定「15 天内」，草稿却说「一经」"))
        self.assertEqual(problems_of("您好！付费版买了 15 天以内都能全额退款，过了 15 天就不退了。", ["R1"], [REFUND]), [])

    def test_a_one_step_computation_is_checked(self):
        tickets = hit("F1", "21:30 以后开场的夜场一律 39 元一张。")
        self.assertEqual(problems_of("夜场 39 元一张，两张一共 78 元。", ["F1"], [tickets], "夜场两张票多少钱？"), [])
        self.assertEqual(problems_of("夜场 39 元一张，两张一共 80 元。", ["F1"], [tickets], "夜场两张票多少钱？"),
                         [guessed("「80 元」和依据对不上：按引文的数一步算，最接近的是 39 × 2 = 78（草稿「两张一共 80 元」）", "F1")])
        fee = hit("Z1", "月卡 599 元；升级独立隔间每月加 200 元。")
        self.assertEqual(problems_of("月卡 599 元，加隔间 200 元，合计 799 元。", ["Z1"], [fee]), [])
        self.assertEqual(problems_of("月卡 599 元，加隔间 200 元，合计 789 元。", ["Z1"], [fee]),
                         [guessed("「789 元」和依据对不上：按引文的数一步算，最接近的是 599 + 200 = 799（草稿「合计 789 元」）", "Z1")])
        refund = hit("Z2", "超过 3 天退卡的，扣除 20% 手续费后退还。")
        self.assertEqual(problems_of("超过 3 天退卡的，扣除 20% 手续费，也就是退还 80%。", ["Z2"], [refund]), [])

    def test_other_spellings_of_the_same_amount(self):
        for draft in ("会员买课打八折。", "单笔满 12,000 元的，另送 1 次免费体检。", "夜里十二点以后不再接受预约。",
                      "具体规则如下：\n1. 会员购买课程享 8 折；\n2. 单笔满一万二千元的，另送 1 次免费体检。"):
            with self.subTest(draft=draft):
                self.assertEqual(problems_of(draft, ["M1"], [CLASS]), [])
        self.assertEqual(problems_of("会员购买课程享 7 折。", ["M1"], [CLASS]), [amount_problem("7 折", "M1", "会员购买课程享 7 折")])

    def test_who_pays_is_compared(self):
        shipping = hit("P1", "退换货的运费由商家承担。")
        self.assertEqual(problems_of("退换货的运费由您自己承担。", ["P1"], [shipping]),
                         [guessed("由谁承担变了：引文是「由商家承担」，草稿写成「由客户承担」", "P1")])
        self.assertEqual(problems_of("退换货的运费由商家承担。", ["P1"], [shipping]), [])

class OddDraftTest(unittest.TestCase):
    """不像回复的草稿：不管是什么字，都给出结论、不抛异常；数字、引文多到不像回复的，整份交给人（见 too_much_to_check）。
    这里不量时间（时间见 checks/bench.py），只核对让时间和草稿长度成正比的那几条规矩。"""

    def test_every_odd_draft_gets_a_verdict(self):
        trial = hit("D01#1", TRIAL["text"], TRIAL["title"])   # 怪草稿里有“[D01#1]”：它是这次发送的片段
        for size in (40, 400, 2000):
            for piece, draft in bench.odd_drafts(size).items():   # 和 checks/bench.py 量时间用的是同一批怪草稿
                with self.subTest(piece=piece, size=size):
                    result = check_grounding(draft, ["D01#1"], [trial])
                    self.assertIn(result["status"], ("draft", "needs_review"))

    def test_an_unsent_id_is_refused_even_in_a_draft_too_long_to_check(self):
        draft = "体验版的试用期是 7 天。" * 170 + "见 [D04#1]。"   # 超过 2000 字：不逐句核对，越界编号照样拒绝
        self.assertEqual(check_grounding(draft, ["T1"], [TRIAL]),
                         {"status": "rejected", "problems": ["来源「D04#1」不在这次发送的资料里（只允许 T1）"], "hints": []})

    def test_a_digit_string_hundreds_long_is_not_a_quantity(self):
        # 400 个 1 不是一个数量（最多读 15 位）：不报错，也不当作数去比
        self.assertEqual(problems_of("编号 " + "1" * 400 + "。", ["T1"], [TRIAL]), [])
        self.assertEqual(retrieval_qa.amounts("1" * 400 + " 天"), {})

    def test_too_many_numbers_or_quotes_go_to_a_person(self):
        numbers = "，".join(f"第{n}条 {n} 元" for n in range(1, 52))   # 每条两个数：第 n 条、n 元，一共 102 个
        self.assertEqual(check_grounding(numbers, ["T1"], [TRIAL]),
                         {"status": "needs_review", "hints": [],
                          "problems": ["草稿有 102 个数字，超过逐句核对的上限 100 个，请人工复核"]})
        quotes = "原文写着「试用期」。" * 6
        self.assertEqual(check_grounding(quotes, ["T1"], [TRIAL])["problems"],
                         ["草稿有 6 处引文，超过逐句核对的上限 5 处，请人工复核"])
        self.assertEqual(check_grounding("原文写着「试用期」。" * 5, ["T1"], [TRIAL])["status"], "draft")

    def test_every_odd_question_up_to_the_limit_gets_through_the_whole_path(self):
        documents = retrieval_qa.load_documents(str(SHIPPED_DOCUMENTS))
        for size in (40, 2000):
            for piece, question in bench.odd_questions(size).items():   # bench.py 量“问题 2000 字”用的同一批
                with self.subTest(piece=piece, size=size):
                    bench.question_path(question, documents)   # 不抛异常就是走完了；时间见 bench.py

    def test_a_question_full_of_numbers_lends_a_bounded_number_of_operands_to_arithmetic(self):
        # 问题里的每个数都拿来两两算账，2000 字的问题要算上百万次：算账最多用 MAX_OPERANDS 个不同的数
        question = "、".join(str(n) for n in range(1, 600))[:2000]   # 问题的上限是 2000 字
        context = retrieval_qa.Context("", [TRIAL], question + "，" + question, None)
        self.assertEqual(context.numbers, tuple(float(n) for n in range(1, retrieval_qa.MAX_OPERANDS + 1)))
        self.assertEqual(problems_of("试用期 7 天，比您说的 12 天少 5 天。", ["T1"], [TRIAL], question="我试用了 12 天"), [])

    def test_the_spellings_a_chinese_reader_uses_are_read_as_meant(self):
        # 红队找到的读错：数字后面紧跟万、千；口语的“三千五”；单位后面的“半”；约数“七八天”；中午；不可能的钟点和日期；“几十”
        for text, expected in (("3万元", {(30000.0, "元")}), ("1.2万元", {(12000.0, "元")}), ("5千元", {(5000.0, "元")}),
                               ("三千五元", {(3500.0, "元")}), ("一万二元", {(12000.0, "元")}), ("一百五元", {(150.0, "元")}),
                               ("一百零五元", {(105.0, "元")}), ("三天半", {(3.5, "天")}), ("两年半", {(2.5, "年")}),
                               ("七八天", set()), ("两三个月", set()), ("七五折", {(75.0, "%")}), ("中午1点", {(780, "时刻")}),
                               ("25点", set()), ("99:99", set()), ("3月32日", set()), ("13月5日", set()), ("几十元", set()),
                               ("周二晚上 8 点", {(1200, "时刻")})):
            with self.subTest(text=text):
                self.assertEqual(set(retrieval_qa.amounts(text)), expected)

    def test_half_and_fifty_percent_off_are_the_same_amount(self):
        for text in ("儿童半价", "会员五折", "老人打 5 折", "退一半", "优惠 50%"):
            with self.subTest(text=text):
                self.assertEqual(set(retrieval_qa.amounts(text)), {(50.0, "%")})

    def test_each_spelling_is_read_once(self):
        self.assertEqual(retrieval_qa.amounts("17 天和 7 天，又是 7 天"), {(17.0, "天"): "17 天", (7.0, "天"): "7 天"})   # “17 天”里的“7 天”不另算
        self.assertEqual(retrieval_qa.amounts("九" * 5000 + "天、" + "九万" * 3000 + "元"), {})   # 太长的一串数字不是数量，也不会出错
    def test_arithmetic_uses_the_numbers_of_the_draft_the_question_and_the_quotes(self):
        prices = hit("P9", "单人票 39 元，双人票 70 元。")
        self.assertEqual(problems_of("单人票 39 元，买两张一共 78 元。", ["P9"], [prices], "买两张单人票多少钱？"), [])
        self.assertEqual(problems_of("单人票 39 元，买两张一共 79 元。", ["P9"], [prices], "买两张单人票多少钱？"),
                         [guessed("「79 元」和依据对不上：按引文的数一步算，最接近的是 39 × 2 = 78（草稿「买两张一共 79 元」）", "P9")])

    def test_a_near_quote_in_a_long_chunk_is_found_without_comparing_every_window(self):
        long_chunk = hit("L1", "这一段和试用无关。" * 300 + "助手只负责写回复草稿，从不自动发送。")
        problems = problems_of("规则说“助手只负责写回复草稿，从不主动发送”。", ["L1"], [long_chunk])
        self.assertEqual(len(problems), 1)
        self.assertTrue(problems[0].startswith("引文在 L1 里近似，需对照原文"), problems[0])


class SampleHitsTest(unittest.TestCase):
    def test_labelled_questions_hit_what_the_labels_assume(self):
        documents = load_documents(str(SHIPPED_DOCUMENTS))
        for question, ids in (("对话记录保存多久，会自动删除吗？", ["D04#1", "D01#2"]),
                              ("体验版试用期间能部署到自己的服务器吗？", ["D01#1", "D02#1"]),
                              ("团队账户的数据安全怎么保证？", ["D03#1", "D04#1"])):
            with self.subTest(question=question):
                self.assertEqual(sorted(h["id"] for h in retrieve(question, documents)), sorted(ids))



class SameInAProcessTest(unittest.TestCase):
    """这一组的命令多数在本进程里运行（kit_helpers.run_kit）。抽几条有代表性的，在真的子进程里再跑一遍，
    退出码、stdout、stderr 必须一字不差：这一组没有哪种命令只在进程内查过。"""

    def test_a_faithful_and_a_changed_number_draft_and_the_measuring_tool(self):
        drafts = {"faithful": {"status": "draft", "draft": "体验版的试用期是 7 天。", "sources": ["D01#1"]},
                  "changed": {"status": "draft", "draft": "体验版的试用期是 17 天。", "sources": ["D01#1"]}}
        with tempfile.TemporaryDirectory() as directory:
            calls = [(["试用几天？", "--check-draft", str(write_temp(directory, f"{name}.json", json.dumps(draft, ensure_ascii=False)))], {})
                     for name, draft in drafts.items()]
            assert_same_in_a_process(self, calls + [(["--holdout"], {"script": ROOT / "checks" / "grounding_eval.py"})])


if __name__ == "__main__":
    unittest.main()
