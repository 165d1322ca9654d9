"""Long, chatty user-assistant conversations with facts hidden among requests (tuning data).

Writes ``memories.jsonl`` and ``queries.jsonl`` in the LoCoMo-dev format that
``evidence_survival.py`` reads: several conversations of about 500 user turns each (only
the user's side, as a memory store sees it), mostly requests for help that carry no
personal fact ("Can you explain how recursion works?", "Write a 300-word summary of the
Cold War", "Can you check my code?"), follow-ups, reactions ("lol"), bare answers ("No.",
"Yes, a lot."), chit-chat and passing remarks about one's day ("We had tacos for
dinner"); among them 30-50 turns carrying a fact about the user, most wrapped inside a
request ("Write an email to my landlord, Lindqvist, about the heater in apartment 12C"),
some stated plainly, some glued to an unrelated request, and some changing an earlier
fact (a move, a new job, a new dose, a new date). Questions ask for each fact, the
current value of a changed one (its evidence is the newer turn only; ``stale`` names the
turn it changed), and a few for two facts at once. English and Japanese conversations.
Each turn's ``form`` says what it is (wrapped, plain, glued, changed, or a filler kind).

Two disjoint template pools (``long_chats_data.py`` holds the facts, this module the
talk around them): ``a`` (the judge's rules were tuned on it) and ``b`` (a check, written
with the same plan but other wording and other values). Neither is held out in the strict
sense: the same person wrote both, knowing the rules.

Usage: python bench/long_chats.py OUT_DIR [--pool a|b] [--convs 6] [--japanese 2]
       [--turns 500] [--seed 0] [--prefix "User: "]
then:  python bench/evidence_survival.py OUT_DIR --caps 50,100,200 [--conversation]
Deterministic for a given seed. Not imported by the tests.
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from long_chats_data import DATED, FACTS, QUESTIONS, VALUES, block_lines, templates


def _fillers(block: str) -> dict[str, list[str]]:
    """``name:`` headers, each followed by lines of `` | ``-separated templates."""
    out: dict[str, list[str]] = {}
    current: list[str] = []
    for line in block_lines(block):
        if line.endswith(":") and " " not in line:
            current = out[line[:-1]] = []
        else:
            current += templates(line)
    for name in ("topics",):
        out[name] = [t.strip() for line in out.get(name, ()) for t in line.split(";") if t.strip()]
    return out


# --- fillers: turns that carry no personal fact -----------------------------------------------
# A request is an ask about a topic (``asks``) or a standalone one (``requests``), sometimes
# with a suffix; topics include weighty words (war, cancer, divorce, earthquakes) that are
# about the world, not the user.

EN_A_FILLER = _fillers(
    """
asks:
Can you explain {topic} in simple terms? | Write a 300-word summary of {topic}.
What are the pros and cons of {topic}? | Give me 5 quiz questions about {topic}.
Explain {topic} like I'm five. | I need a catchy title for a blog post about {topic}.
I want to understand {topic} better, where do I start? | I have a question about {topic}.
What are the main causes of {topic}? | Write an essay outline on {topic}.
What's a common misconception about {topic}? | Compare {topic} with something from everyday life.
Write a short poem inspired by {topic}. | Give me a timeline of {topic}.
Who are the key people associated with {topic}? | What should every student know about {topic}?
I'm curious about {topic}. What's the most surprising thing about it?
Can you write a LinkedIn post about {topic}?
Draft 3 discussion questions on {topic} for a seminar.
How would you explain {topic} to a 12-year-old? | Summarize the debate around {topic}.
I've always wondered how {topic} actually works. | Make a study guide for {topic}.
Tell me something interesting about {topic}. | Write a persuasive paragraph about {topic}.
What are 3 good books on {topic}? | Is there a simple analogy for {topic}?
requests:
What's the difference between a list and a tuple in Python? | Write a haiku about autumn leaves.
How do I reverse a string in JavaScript? | Convert 72 degrees Fahrenheit to Celsius.
What's 15% of 240? | Who was Ada Lovelace and why is she famous?
Summarize the plot of Pride and Prejudice. | Can you check my code? It throws a KeyError on line 12.
Make my cover letter sound less stiff. | Fix the grammar in my sentence: "Their going to the store."
Shorten my bio to two sentences. | I'm confused about how closures work in JavaScript.
What happened on July 20, 1969? | Write a limerick about a cat who loves Mondays.
How many ounces are in a cup? | Give me a regex that matches US zip codes.
Plan a 3-day itinerary for Rome for a first-time visitor. | How do I center a div with CSS grid?
Write a product description for a stainless steel water bottle, 750 ml.
How does the Federal Reserve set interest rates? | What's a good name for a fantasy tavern?
Draft a polite email declining a meeting invitation. | Explain Big-O notation with examples.
Write a SQL query that finds the top 10 customers by total spend in 2023.
List 7 tips for public speaking. | Brainstorm ten names for a coffee shop.
Write a short story opening set on a train to Vienna. | Compare Python and Go for web backends.
Summarize this: "The committee met on Tuesday to review the 2024 budget. After two hours,
  members agreed to postpone the vote until the auditor's report, expected in March, is published."
Translate "Where is the train station?" into German. | What's the best way to learn touch typing?
Is it true that we only use 10% of our brains? | Write a motivational quote about persistence.
Explain how a bill becomes law in the United States. | What does HTTP status 418 mean?
My teacher wants us to argue one side of a debate. How do I structure an opening statement?
I'm writing a mystery story; what are some classic red herrings?
Write a toast for a retirement party.
Can you make this sound more professional: "we r late on the report, sorry, will send monday"
I have to present to my team tomorrow, how do I open a talk without being boring?
Rewrite this paragraph in plain English: "Pursuant to the aforementioned clause, the lessee shall
  remit payment no later than the 5th business day of each calendar month."
What are good questions to ask at the end of a job interview?
How do vaccines train the immune system?
suffixes:
Keep it under 200 words. | Use simple language. | Please include 3 examples. | Make it funny.
Format it as a table. | It's for a class presentation. | Bullet points please.
Cite sources if you can.
No jargon, please. | Thanks in advance! | Make it suitable for teenagers. | Be concise.
followups:
Can you make it shorter? | Give me two more examples. | What about in JavaScript?
Explain that last part again, more simply. | Can you put that in a table? | Why does that work?
Rewrite it in a friendlier tone. | And what if the list is empty? | Can you add sources?
Make it rhyme. | Now translate it into Spanish. | Could you expand point 3?
Is there a faster way? | Use bullet points instead. | Can you make it more formal?
What would be a counterargument? | Add a conclusion paragraph. | Try again, but funnier.
Hmm, I don't think that's right. Can you double-check the second step?
That's too long, I only need the main idea. | OK but what if I'm using Windows?
reactions:
lol | thanks! | ok | cool | thank you so much | perfect | that's great | haha nice | got it | hmm
nice | ok thanks | awesome, that worked | wow | That's really helpful, thanks! | great, thanks
oh I see | makes sense | interesting | love it | lmao | good one | 👍 | ty
bare:
No. | Yes, a lot. | Yes. | Not really. | Sure. | Maybe. | The second one. | Both. | Yes please
Nope | A little. | Sometimes. | Option B. | Not yet. | Kind of. | I don't know. | Probably not.
All of them. | Just the first. | Yes, definitely. | No, thanks. | Never. | Always.
asides:
I'm so tired today, long day at work. | I just got back from the grocery store.
My coworker keeps microwaving fish lol | I think I'll make pasta tonight.
I watched a documentary about octopuses yesterday, wild. | I finally cleaned my desk.
We had tacos for dinner. | I'm procrastinating on laundry. | My neighbor's dog barked all night.
I spilled coffee on my shirt this morning. | I love rainy Sundays. | I'm in a good mood today!
I went for a short walk at lunch. | My phone is almost dead. | I fell asleep on the couch again.
My sister called earlier, we chatted for an hour. | I think I need a haircut.
Work was so busy this week. | I'm trying to drink more water. | We're out of milk again.
chat:
How's your day going? | Do you ever get tired of questions? | It's raining again here.
I'm so bored today. | Good morning! | Guess what, I had a huge burrito for lunch. | Happy Friday!
Ugh, Mondays. | Do you dream? | What's your favorite color? | I'm procrastinating again lol
Tell me a joke. | I can't sleep. | Coffee time. | Long day. | brb | Back! | hey
The traffic was terrible this morning. | My tea went cold again. | I think I'm getting a cold.
topics:
photosynthesis; the French Revolution; TCP vs UDP; compound interest; vaccines
the Treaty of Versailles; Kubernetes pods; black holes; supply and demand; recursion in Python
the water cycle; the Roman Empire; machine learning; climate change; the Cold War
quantum computing; the human immune system; Impressionist painting; SQL joins; the Silk Road
World War I; the 2008 financial crisis; cancer immunotherapy; the 1918 flu pandemic
divorce rates in Europe; antidepressants; the Chernobyl disaster; the gig economy
earthquake preparedness; the history of the Olympic Games; minimum wage laws; sleep science
the fall of Constantinople in 1453; the Great Barrier Reef; universal basic income; the Beatles
"""
)
EN_B_FILLER = _fillers(
    """
asks:
Break down {topic} for a beginner, please. | List 10 fun facts about {topic}.
Draft a short essay intro on {topic}. | Which books would you recommend on {topic}?
Write a tweet thread (4 tweets) explaining {topic}. | Is {topic} overrated? Argue both sides.
Recommend three podcasts about {topic}. | Outline a 20-minute talk on {topic}.
What would a historian say about {topic}? | Give me a one-paragraph ELI5 on {topic}.
Could you quiz me on {topic}? Ten questions, multiple choice. | What are the ethics of {topic}?
How has {topic} changed over the last 50 years? | Create flashcards for {topic}.
Write a children's story that teaches {topic}. | What are the biggest myths about {topic}?
Find me a good metaphor for {topic}. | Describe {topic} in exactly three sentences.
Play devil's advocate on {topic}. | Why does {topic} matter today?
I was reading about {topic} and got lost. Can you untangle it? | Summarize {topic} for a newsletter.
requests:
How does HTTPS encryption work? | Write a cover letter template for a junior accountant role.
In Rust, when should I use Box versus Rc? | Calculate the monthly payment on a $250,000 loan at 6%.
Give me a packing list for a week of camping in Yosemite in October.
Why did the Titanic sink so fast?
Rewrite my paragraph so it flows better. | Debug my loop, it never ends.
Tidy up my meeting notes into action items. | Suggest 8 icebreaker questions for a team offsite.
I keep mixing up "affect" and "effect", help! | What has keys but can't open locks?
What year did the Berlin Wall fall? | Write a bash one-liner to count lines in all .py files.
What is the population of Canada? | How long should I boil an egg for a runny yolk?
Create a workout playlist of 15 upbeat songs. | What does "per se" mean?
Turn this into a formal request: "hey can u send the file by fri". | Explain the Monty Hall problem.
Write a eulogy template for a beloved teacher. | How do credit scores work in the US?
Compare the iPhone 15 and Pixel 8 cameras. | Solve for x: 3x + 7 = 25.
What causes the northern lights? | Draft a LinkedIn post about learning from failure.
Paraphrase: "Despite the storm, the 9:00 ferry to Victoria left on time and arrived early."
My professor assigned Moby Dick, is there a chapter guide? | Name 5 board games for 6 players.
I'm preparing a quiz night, give me 10 geography questions with answers.
Help me understand this error: TypeError: 'NoneType' object is not subscriptable
Write an apology email to a customer whose order arrived 2 weeks late.
Condense this: "Sales rose 4% in Q3, driven by the new Denver store, while online orders fell
  slightly after the August price change." | What is the tallest mountain in Africa?
suffixes:
Short answer please. | Go step by step. | Two paragraphs max. | Assume I'm a beginner.
Give me sources. | Use a friendly tone. | Write it for a general audience. | Add an example.
followups:
Shorter, please. | Another option? | What about for kids? | Can you simplify that?
Can you give a real-world example? | Make it sound less robotic. | Continue.
How would that look in Java? | Put the steps in order. | Could you cite a study?
Fewer adjectives please. | Redo it as a numbered list. | What did you mean by the second point?
Wait, that contradicts what you said before. | Same thing but in French.
reactions:
thx | cheers | ahh ok | neat | yep got it | Brilliant, thank you! | haha | ok cool | sweet
appreciate it | thanks a bunch | 😂 | nice one | right | that helps | fair enough | omg yes | great
bare:
Yeah. | No, not at all. | Nah. | Yes, exactly. | A bit. | The first. | Neither. | Once.
Not sure. | Definitely not. | Sometimes, yes. | Twice. | Mostly. | Sort of. | No idea. | Go on.
asides:
Just finished a long meeting, my brain is fried. | I made banana bread this afternoon.
My cat knocked a glass off the table again. | I'm cold, the heating is off at the office.
We binge-watched a whole season last night. | I forgot my umbrella, of course.
I think I'll go to bed early tonight. | My kid drew a dinosaur on the fridge lol
I went to a new coffee place, it was okay. | I'm eating way too many snacks today.
The bus was late again this morning. | I cleaned out my inbox, feels good.
My mom sent me a funny meme. | I've been listening to the same song all day.
chat:
Morning! | It's so hot today. | What's up? | Anyway. | I'm hungry. | Finally the weekend!
Are you a real person? | I had pizza again lol | sigh | Good night! | It's snowing here!
I'm tired. | Just woke up. | Monday again... | Hello again | I spilled coffee on my desk.
topics:
the Renaissance; cryptocurrency; plate tectonics; inflation; REST APIs; the Great Depression
the causes of World War II; the Apollo program; CRISPR; the stock market; neural networks
the printing press; ocean currents; the Industrial Revolution; Docker containers; game theory
Greek mythology; the electoral college; renewable energy; the Byzantine Empire
the opioid crisis; Alzheimer's research; refugee law; the Fukushima accident; hurricane forecasting
the history of marriage; the Spanish flu; nuclear fusion; the housing market crash; dinosaurs
"""
)
JA_A_FILLER = _fillers(
    """
asks:
{topic}について簡単に説明してください。 | {topic}のメリットとデメリットを教えて。
{topic}について小学生向けにまとめて。 | {topic}のクイズを5問作って。
{topic}の歴史を年表にしてください。 | {topic}についてのブログ記事のタイトル案を10個。
{topic}がよくわからないので、例えを使って教えて。 | {topic}について300字で要約して。
requests:
Pythonで辞書を値でソートする方法は？ | 敬語のメールの書き方を教えてください。
おすすめの本を5冊教えて。 | 1ドルは何円くらい？ | 俳句を一つ作って。
この文を英語に翻訳して：「明日の会議は10時からです」 | Excelで重複を削除する方法を教えて。
明治維新の流れを300字で説明して。 | プレゼンの構成案を考えてください。
私のコードのどこが間違っているか見てもらえますか？ | 富士山の高さは？
この文章をもっと自然にして：「ご確認のほどよろしくお願い致します」
カレーをおいしく作るコツは？ | 京都の2泊3日の観光プランを立てて。
suffixes:
箇条書きでお願いします。 | 短めでいいです。 | 具体例もください。 | 初心者向けに。
followups:
もう少し短くして。 | 例をもう二つください。 | 表にまとめて。 | もっとやさしく説明して。
なぜですか？ | 箇条書きにして。 | 英語でもお願いします。 | 続けて。
reactions:
ありがとう！ | 了解 | なるほど | 草 | 笑 | 助かりました | すごい | いいね | OK | へえー
bare:
はい。 | いいえ。 | うん | まあまあです | たくさん。 | 少しだけ。 | 二つ目で。 | 両方。
まだです。 | たぶん。 | 特にないです。
asides:
今日は仕事が忙しかった。 | さっきコンビニに行ってきた。 | 夕飯はパスタにしようかな。
昨日ドキュメンタリーを見た。 | 机を片付けた！ | 隣の犬が一晩中吠えてた。 | 今日は気分がいい。
コーヒーをこぼしちゃった。 | ちょっと散歩してきた。 | 母から電話があった。
chat:
今日は雨ですね。 | 眠い… | おはよう！ | 暇だなあ | 週末何しようかな | お腹すいた
疲れたー | 金曜日だ！
topics:
光合成; 円安; 鎌倉幕府; 機械学習; 地震のしくみ; 消費税; ブロックチェーン; 江戸時代
がん治療; 第二次世界大戦; 少子化; 離婚率の推移; 原発事故; 年功序列
"""
)
JA_B_FILLER = _fillers(
    """
asks:
{topic}の歴史をざっくり教えて。 | {topic}を一言で言うと？ | {topic}に関するおすすめの本は？
{topic}について賛成と反対の意見をまとめて。 | {topic}をテーマにした短い物語を書いて。
{topic}について友達に説明するならどう言う？ | {topic}の最新の動向は？
requests:
JavaScriptで配列の重複を消すには？ | 取引先へのお詫びメールの例文をください。
部屋の片付けのコツを7つ挙げて。 | 100円ショップで買える便利グッズは？ | 短歌を詠んで。
「お疲れ様です」を英語で言うと？ | 北海道の旅行で外せない場所は？
この文を要約して：「本日の会議では来年度の予算案が承認され、次回は4月に開催予定です」
私の文章を添削してください：「わたしわ昨日学校え行きました」 | 面接でよく聞かれる質問を10個教えて。
1から100までの和は？ | パスタを茹でる塩の量は？
suffixes:
簡潔にお願いします。 | 表にしてください。 | わかりやすく。 | 出典もあれば。
followups:
もっと詳しく。 | 別の案は？ | 子ども向けにして。 | 三行で。 | 具体例は？ | 丁寧な言い方にして。
reactions:
ありがとうございます | わかりました | ですよね | ウケる | さすが | ほんとだ | 👍 | どうも
bare:
ええ。 | いや。 | ううん | ちょっとだけ | 結構。 | 最初の。 | どっちも。 | 一回だけ。 | 多分ね
asides:
会議が長引いて疲れた。 | 昼に新しいカフェに行った。 | 傘を忘れた…。 | 今日は早く寝よう。
お菓子を食べすぎた。 | 姉からLINEが来た。 | 部屋の掃除をした。 | 電車が遅れてた。
chat:
こんにちは | 暑いね | 寒すぎる | 月曜日つらい | ねむたい | 雪だ！ | おやすみ | ひまー
topics:
インターネット; 戦国時代; 量子コンピュータ; インフレ; 宇宙開発; 年金制度; 再生可能エネルギー
認知症の予防; 震災の教訓; 介護保険; 失業率; 冷戦
"""
)

# --- gluing a plain statement to an unrelated request -------------------------------------------

#: How a plain statement is glued to an unrelated request ({fact_l}: lowercased start).
WRAPPERS = {
    "en": {
        "a": templates(
            "{fact} {ask} | Random context: {fact_l}. {ask} | {ask} (Also, {fact_l}, in case"
            " it matters.) | Not related, but {fact_l}. Meanwhile: {ask} | {ask} By the way,"
            " {fact_l}."
        ),
        "b": templates(
            "{fact} Unrelated question: {ask} | {ask} Oh and {fact_l}. | FYI {fact_l}. {ask}"
            " | So, {fact_l}. {ask} | {ask} For context, {fact_l}."
        ),
    },
    "ja": {
        "a": templates("{fact}ところで、{ask} | {ask}ちなみに、{fact} | {fact}それで、{ask}"),
        "b": templates(
            "{fact}それとは別に、{ask} | {ask}（参考までに、{fact}） | 話は変わりますが、"
            "{fact}{ask}"
        ),
    },
}

FILLER = {"en": {"a": EN_A_FILLER, "b": EN_B_FILLER}, "ja": {"a": JA_A_FILLER, "b": JA_B_FILLER}}

#: How many facts of a kind a conversation holds (different events, siblings, pets), at most
#: one of each other kind.
REPEATED = {"event": (5, 10), "sibling": (1, 2), "kid": (1, 2), "pet": (1, 2)}
#: Share of the changeable facts that change later in the conversation.
CHANGED_SHARE = 0.7
#: Mix of the other turns: requests, follow-ups, reactions, bare answers, chit-chat.
MIX = (
    ("requests", 0.5),
    ("followups", 0.15),
    ("reactions", 0.09),
    ("bare", 0.07),
    ("chat", 0.07),
    ("asides", 0.12),
)


@dataclass
class Fact:
    kind: str
    values: dict[str, str]
    turn: int = -1
    changed_turn: int = -1
    new_values: dict[str, str] = field(default_factory=dict)


def pick_values(
    rng: random.Random,
    values: dict[str, list[str]],
    specs: list[str],
    taken: set[str],
    old: dict[str, str] | None = None,
) -> dict[str, str]:
    """Slot values (``name`` or ``name=list``), fresh in the conversation when possible.

    A changed slot never gets its ``old`` value back.
    """
    out: dict[str, str] = {}
    for spec in specs:
        name, _, source = spec.partition("=")
        pool = [v for v in values[source or name] if v != (old or {}).get(name)]
        options = [v for v in pool if v not in taken] or pool
        out[name] = rng.choice(options)
        taken.add(out[name])
    return out


def fill(template: str, values: dict[str, str], old: dict[str, str] | None = None) -> str:
    return template.format(**values, **{f"old_{k}": v for k, v in (old or {}).items()})


def lower_first(template: str, text: str) -> str:
    """``text`` to go mid-sentence: its first letter lowered unless it is "I" or a value."""
    if template.startswith("{") or text.startswith(("I ", "I'")) or not text[:1].isascii():
        return text.rstrip(".")
    return (text[:1].lower() + text[1:]).rstrip(".")


def filler(rng: random.Random, pool: str, lang: str, kind: str) -> str:
    """A filler turn of ``kind``; a request is an ask about a topic or a standalone one."""
    data = FILLER[lang][pool]
    if kind != "requests":
        return rng.choice(data[kind])
    ask = rng.choice(data["asks"] if rng.random() < 0.6 else data["requests"])
    ask = ask.replace("{topic}", rng.choice(data["topics"]))
    if rng.random() < 0.3:
        ask += ("" if lang == "ja" else " ") + rng.choice(data["suffixes"])
    return ask


def fact_text(
    rng: random.Random, pool: str, lang: str, fact: Fact, changed: bool
) -> tuple[str, str]:
    """The turn stating ``fact`` (its new value if ``changed``), and its form."""
    forms = FACTS[lang][pool][fact.kind]
    if changed:
        return fill(rng.choice(forms["changed"]), fact.new_values, fact.values), "changed"
    roll = rng.random()
    if roll < 0.55 or not forms["plain"]:
        return fill(rng.choice(forms["wrapped"]), fact.values), "wrapped"
    template = rng.choice(forms["plain"])
    statement = fill(template, fact.values)
    if roll < 0.8:  # a plain statement glued to an unrelated request
        wrapper = rng.choice(WRAPPERS[lang][pool])
        ask = filler(rng, pool, lang, "requests")
        glued = wrapper.format(fact=statement, fact_l=lower_first(template, statement), ask=ask)
        return glued, "glued"
    return statement, "plain"


def place(rng: random.Random, facts: list[Fact], turns: int) -> None:
    """Originals anywhere in the first 80% of turns; a change at least 60 turns later."""
    slots = sorted(rng.sample(range(2, int(turns * 0.8)), len(facts)))
    rng.shuffle(slots)
    for f, t in zip(facts, slots, strict=True):
        f.turn = t
    placed = {f.turn for f in facts}
    for f in facts:
        if f.new_values:
            start = min(f.turn + 60, turns - 2)
            f.changed_turn = rng.choice([t for t in range(start, turns) if t not in placed])
            placed.add(f.changed_turn)


def conversation(rng: random.Random, pool: str, lang: str, conv: str, turns: int) -> tuple:
    kinds, values = FACTS[lang][pool], VALUES[lang][pool]
    facts: list[Fact] = []
    taken: set[str] = set()
    for kind, spec in kinds.items():
        for _ in range(rng.randint(*REPEATED.get(kind, (1, 1)))):
            if rng.random() < 0.95:
                facts.append(Fact(kind, pick_values(rng, values, spec["slots"], taken)))
    changeable = [f for f in facts if kinds[f.kind]["changed"]]
    for f in rng.sample(changeable, k=round(len(changeable) * CHANGED_SHARE)):
        spec = kinds[f.kind]
        changing = [s for s in spec["slots"] if not spec["changes"] or s in spec["changes"]]
        f.new_values = f.values | pick_values(rng, values, changing, taken, f.values)
    place(rng, facts, turns)
    by_turn = {f.turn: (f, False) for f in facts} | {
        f.changed_turn: (f, True) for f in facts if f.new_values
    }
    texts: list[tuple[str, str]] = []  # (text, form or filler kind)
    follow = 0
    kinds_mix, weights = zip(*MIX, strict=True)
    for t in range(turns):
        if t in by_turn:
            texts.append(fact_text(rng, pool, lang, *by_turn[t]))
            follow = rng.choice((0, 1, 1, 2))
        elif follow:
            texts.append((filler(rng, pool, lang, "followups"), "followups"))
            follow -= 1
        else:
            kind = rng.choices(kinds_mix, weights)[0]
            texts.append((filler(rng, pool, lang, kind), kind))
    memories, ids = [], []
    session, in_session, left = 1, 0, rng.randint(12, 30)
    for t, (text, form) in enumerate(texts):
        if left == 0:
            session, in_session, left = session + 1, 0, rng.randint(12, 30)
        in_session += 1
        left -= 1
        ids.append(f"D{session}:{in_session}")
        memories.append(
            {
                "conv": conv,
                "id": ids[-1],
                "text": text,
                "speaker": "User",
                "session": session,
                "turn": in_session,
                "fact": t in by_turn,
                "form": form,
            }
        )
    return memories, questions(rng, lang, conv, facts, ids), len(by_turn)


def questions(rng: random.Random, lang: str, conv: str, facts: list[Fact], ids: list[str]) -> list:
    """One question per fact (the current value of a changed one), and three for two facts."""
    out = []
    for n, f in enumerate(facts):
        current = f.new_values or f.values
        out.append(
            {
                "conv": conv,
                "qid": f"{conv}:q{n}",
                "question": QUESTIONS[lang][f.kind].format(**current),
                "evidence": [ids[f.changed_turn if f.new_values else f.turn]],
                "category": 2 if f.kind in DATED else 4,
                "answer": " / ".join(current.values()),
                "changed": bool(f.new_values),
                "stale": [ids[f.turn]] if f.new_values else [],  # the turn it changed
            }
        )
    plain = [f for f in facts if not f.new_values]
    for k in range(min(3, len(plain) // 2)):
        x, y = rng.sample(plain, 2)
        out.append(
            {
                "conv": conv,
                "qid": f"{conv}:m{k}",
                "question": QUESTIONS[lang][x.kind].format(**x.values)
                + " "
                + QUESTIONS[lang][y.kind].format(**y.values),
                "evidence": [ids[x.turn], ids[y.turn]],
                "category": 1,
                "answer": " / ".join([*x.values.values(), *y.values.values()]),
                "changed": False,
            }
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--pool", choices=("a", "b"), default="a")
    ap.add_argument("--convs", type=int, default=6)
    ap.add_argument("--japanese", type=int, default=2, help="how many conversations in Japanese")
    ap.add_argument("--turns", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--prefix", default="", help='speaker label, e.g. "User: " (default none)')
    args = ap.parse_args()
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    memories, queries, counts = [], [], []
    for c in range(args.convs):
        lang = "ja" if c >= args.convs - args.japanese else "en"
        rng = random.Random(f"{args.seed}:{args.pool}:{c}")
        conv = f"{args.pool}{c:02d}-{lang}"
        m, q, n = conversation(rng, args.pool, lang, conv, args.turns)
        for row in m:
            row["text"] = args.prefix + row["text"]
        memories += m
        queries += q
        counts.append(n)
    with (out / "memories.jsonl").open("w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in memories)
    with (out / "queries.jsonl").open("w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in queries)
    summary = {"pool": args.pool, "convs": args.convs, "turns": len(memories)}
    print(json.dumps(summary | {"fact_turns_per_conv": counts, "queries": len(queries)}))


if __name__ == "__main__":
    main()
