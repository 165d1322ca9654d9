"""The offline supersession detector and restatement, on sentences written for this test.

Each update pair must supersede (the old memory is retired), each control pair must not
(someone else's fact, an added fact, a hypothetical, another meaning). Retiring a memory
that still holds is the worse error, so controls outnumber nothing and are never relaxed.
"""

from __future__ import annotations

import pytest

from aimem.judges.heuristic.statement import recall_terms, restate
from aimem.judges.heuristic.supersession import find_superseded, read

UPDATES: list[tuple[str, str]] = [
    # residence
    ("I live in Leeds.", "We relocated to Bristol over the summer."),
    ("I'm based in Oslo.", "I moved to Bergen in March for the harbour views."),
    ("My apartment is in Queens.", "My apartment is in Hoboken now."),
    ("I'm renting a flat in Camden.", "I no longer live in Camden; we bought a place in Kent."),
    ("名古屋に住んでいます。", "先週、神戸に引っ越しました。"),
    ("東京在住です。", "去年、福岡に移住しました。"),
    # job
    ("I work as an accountant at a small firm.", "I quit accounting and now work as a chef."),
    ("I'm a junior analyst at Barclays.", "I got promoted to senior analyst last week."),
    ("User works at Acme as a designer.", "User moved to a product role at Globex."),
    (
        "I'm a primary school teacher.",
        "I left teaching in June and joined a charity as a fundraiser.",
    ),
    ("病院で看護師として働いています。", "看護師を辞めて、今は保育園で働いています。"),
    ("I work full-time, five days a week.", "I've gone part-time, three days a week."),
    # schedule
    ("My physio appointment is Tuesday at 4pm.", "The physio appointment moved to Friday at 9am."),
    ("The product launch is on 2 May.", "The product launch is on 16 May."),
    ("My guitar lesson is every Monday evening.", "I cancelled my guitar lessons for August."),
    ("歯医者の予約は月曜日の10時です。", "歯医者の予約は水曜日の14時です。"),
    ("The board meeting is on Thursday at 2pm.", "The board meeting got pushed to Monday at 10am."),
    # dose
    ("I take 25 mg of sertraline.", "My psychiatrist raised my sertraline to 50 mg."),
    ("I'm on metformin twice a day.", "I stopped taking metformin after my last check-up."),
    ("睡眠薬を1錠飲んでいます。", "睡眠薬は半分の量に減らしました。"),
    # preference
    ("My favourite film is Alien.", "My favourite film is Arrival."),
    ("I love sushi.", "I can't stand sushi anymore after that food poisoning."),
    ("好きな作家は東野圭吾です。", "好きな作家は宮部みゆきです。"),
    ("I prefer Android phones.", "I switched from Android to an iPhone this year."),
    # possession
    ("I drive a Toyota Corolla.", "I sold the Corolla and got a Mazda 3."),
    ("My laptop is a ThinkPad T14.", "My laptop is a MacBook Pro."),
    (
        "ホンダのフィットに乗っています。",
        "フィットを手放して、今はスズキのスイフトに乗っています。",
    ),
    # pet
    ("We have a rabbit called Thumper.", "Thumper died last week, we buried him in the garden."),
    ("I have two hamsters.", "One of the hamsters died, so now I have just one."),
    ("犬を二匹飼っています。", "犬が一匹亡くなって、今は一匹だけです。"),
    # relationship
    ("My boyfriend Tom and I live together.", "Tom and I split up in the spring."),
    ("I'm single.", "I'm dating someone new, her name is Aiko."),
    ("My fiancé Raj and I are getting married in June.", "Raj and I got married last weekend!"),
    ("彼女の美咲とは付き合って2年です。", "美咲とは先月別れました。"),
    # habit
    ("I smoke a pack a day.", "I gave up smoking last month."),
    ("I drink a glass of wine every evening.", "I don't drink alcohol anymore."),
    ("I swim three times a week.", "I'm down to one swim a week since the new job."),
    ("I've stopped running because of my knee.", "I'm running again, three times a week."),
    ("毎朝コーヒーを2杯飲みます。", "コーヒーはやめました。"),
    ("I drive to work every day.", "I cycle to work now, it takes 20 minutes."),
    # health and negation
    (
        "I'm allergic to amoxicillin.",
        "The allergist says I'm not actually allergic to amoxicillin.",
    ),
    ("I was diagnosed with anaemia.", "My blood test came back normal, I'm no longer anaemic."),
    # plans
    (
        "We're going to Spain for our anniversary in May.",
        "We moved the anniversary trip to Greece instead.",
    ),
    ("I'm planning to run a marathon in October.", "Not doing the marathon this year after all."),
]

CONTROLS: list[tuple[str, str]] = [
    # a pause, hearsay, a wedding plan: nothing lasting ends
    ("I go climbing at the bouldering gym.", "The climbing gym is closed this week for repairs."),
    ("I run 5k most mornings.", "I hurt my knee, so no running for a couple of weeks."),
    ("Apparently a new bakery opened near the station.", "I stopped buying bread at bakeries."),
    ("Our wedding is on 12 June.", "My fiancé is a plumber."),
    ("My girlfriend is a vet.", "We're inviting 60 guests to the wedding."),
    # transcript turns: each speaker is their own subject
    ("Ana: I live in Lisbon with my parents.", "Ben: We moved to Porto last year."),
    ("Ana: I work at a bakery downtown.", "Ben: I quit my bakery job in May."),
    # someone else, same attribute
    ("I live in Leeds.", "My brother just moved to Bristol."),
    ("I work as an accountant.", "My wife just started as an accountant at Deloitte."),
    ("I have a cat named Miso.", "My neighbour got a cat called Tofu."),
    ("I'm allergic to peanuts.", "My daughter is allergic to peanuts too."),
    ("My yoga class is on Mondays at 6pm.", "My son's karate class is on Mondays at 5pm."),
    ("大阪に住んでいます。", "弟が先月東京に引っ越しました。"),
    ("銀行で働いています。", "夫は去年転職しました。"),
    ("I'm married to Alex.", "My sister and her husband are separating."),
    ("I love jazz.", "My husband hates jazz, so I listen on headphones."),
    # an added fact
    ("I'm allergic to penicillin.", "I'm also allergic to latex."),
    ("I have a dog called Rex.", "We adopted a second dog, a beagle named Max."),
    ("I like green tea.", "I've started drinking coffee too."),
    ("I own a road bike.", "I bought a mountain bike as well."),
    ("I run every Saturday.", "I've added a yoga session on Tuesdays."),
    ("卵アレルギーがあります。", "えびにもアレルギーがあることがわかりました。"),
    ("猫を飼っています。", "先月から犬も飼い始めました。"),
    ("I work at the hospital.", "I also teach a first-aid course on weekends."),
    # hypotheticals and questions
    ("I live in Austin.", "We're thinking about moving to Denver next year."),
    ("I work at Google.", "I might apply for a job at Meta."),
    ("I drive a Honda.", "Should I buy a Tesla?"),
    ("横浜に住んでいます。", "来年、札幌に引っ越すかもしれません。"),
    # past event plus a new one, other meanings
    ("I broke my arm in 2018.", "I sprained my wrist playing tennis yesterday."),
    ("I used to play the piano as a kid.", "I've started playing the piano again."),
    ("My partner, Sam, is a vet.", "My business partner Kim wants to expand the shop."),
    ("My bike is a Brompton.", "I'm getting a new bike for my son's birthday."),
    ("実家は仙台にあります。", "今は川崎に住んでいます。"),
    ("My phone number is 555-0101.", "My new desk extension is 4410."),
    ("I went to Rome last spring.", "We're visiting Lisbon in June."),
    ("I take vitamin D in winter.", "My doctor put me on 10 mg of amlodipine."),
    ("My standup is at 9:30 every weekday.", "I prefer meetings in the afternoon."),
    ("I drink two coffees a day.", "The coffee shop near work closed down."),
    ("I have a dentist appointment on Friday.", "I stopped watching TV in the evenings."),
]


def test_a_long_memory_is_never_retired_whole() -> None:
    story = (
        "I live in Lisbon. I teach maths at a school there. My sister visits every summer, "
        "and we go to the beach together."
    )
    assert find_superseded("We moved to Porto last month.", [story]) == ()


def test_a_speaker_can_update_their_own_fact() -> None:
    found = find_superseded("Ana: We moved to Porto last month.", ["Ana: I live in Lisbon."])
    assert [i for i, _ in found] == [0]


@pytest.mark.parametrize(("old", "new"), UPDATES)
def test_update_supersedes_the_old_memory(old: str, new: str) -> None:
    found = find_superseded(new, [old])
    assert [i for i, _ in found] == [0], (old, new, found)
    assert all(0 < len(reason) <= 200 for _, reason in found)


@pytest.mark.parametrize(("old", "new"), CONTROLS)
def test_control_supersedes_nothing(old: str, new: str) -> None:
    assert find_superseded(new, [old]) == (), (old, new)


def test_supersedes_every_matching_memory_and_nothing_else() -> None:
    related = [
        "I live in Leeds.",
        "I like tea.",
        "My flat is in Leeds, near the station.",
        "My sister lives in York.",
        "I work at a bakery.",
    ]
    found = find_superseded("We moved to Glasgow last month.", related)
    assert [i for i, _ in found] == [0, 2]
    assert "residence" in found[0][1]


def test_related_may_already_be_restated() -> None:
    old = restate("I live in Leeds.")
    found = find_superseded("We moved to Glasgow.", [old, "User: I live in Leeds."])
    assert [i for i, _ in found] == [0, 1]


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "\x00\x01\x02",
        "?",
        "🙂" * 50,
        "a" * 100_000,
        "I live in 東京 and 大阪 " * 500,
        "\u202e\ufeff",
        "None",
    ],
)
def test_never_raises_on_odd_text(text: str) -> None:
    assert isinstance(find_superseded(text, [text, "I live in Leeds.", ""]), tuple)
    assert 0 < len(restate(text)) <= 500


def test_non_string_related_is_tolerated() -> None:
    assert find_superseded("We moved to Glasgow.", [None, 3]) == ()  # type: ignore[list-item]


def test_deterministic() -> None:
    a = find_superseded("I quit smoking.", ["I smoke ten a day.", "I like tea."])
    read.cache_clear()
    assert find_superseded("I quit smoking.", ["I smoke ten a day.", "I like tea."]) == a


# --- restatement ---------------------------------------------------------------------


def test_restate_is_a_clean_third_person_sentence() -> None:
    text = restate("We moved to Sapporo last month.")
    assert text == "The user and others moved to Sapporo last month."
    assert "(where" not in text and not text.startswith("User:")
    assert restate("I live in Sendai.") == "The user lives in Sendai."
    assert restate("I'm allergic to penicillin.") == "The user is allergic to penicillin."


def test_restate_keeps_whose_fact_it_is() -> None:
    assert restate("My sister just moved to Tucson.") == "The user's sister just moved to Tucson."
    assert "the user is sakura" not in restate("my daughter is Sakura").lower()
    assert restate("Caroline: I adopted a cat.") == "Caroline adopted a cat."


def test_restate_leaves_quotes_and_other_words_as_they_were_said() -> None:
    quoted = restate('My brother says "I live in Tokyo".')
    assert quoted == 'The user\'s brother says "I live in Tokyo".'
    assert restate("World War I history is my hobby.").startswith("World War I history")


def test_restate_japanese() -> None:
    assert restate("先月、札幌に引っ越しました。") == "先月、札幌に引っ越しました。"
    assert restate("私は札幌に住んでいます。") == "ユーザーは札幌に住んでいます。"
    assert restate("私立大学に通っています。") == "私立大学に通っています。"


@pytest.mark.parametrize(
    ("text", "kind", "word"),
    [
        ("I work as a nurse at the city hospital.", "job", "occupation"),
        ("My dentist appointment is Friday at 3pm.", "schedule", "booked"),
        ("I take 20 mg of atorvastatin.", "dose", "medication"),
        ("We have a beagle named Rufus.", "pet", "pet"),
        ("I drive a Honda Civic.", "possession", "owns"),
        ("I'm engaged to Priya.", "relationship", "partner"),
        ("先月、札幌に引っ越しました。", "residence", "live"),
    ],
)
def test_recall_terms_name_the_slot_in_both_languages(text: str, kind: str, word: str) -> None:
    terms = recall_terms(text)
    assert word in terms.split() and kind in {s.kind for s in read(text).slots}
    assert any("\u3040" <= ch <= "\u9fff" for ch in terms)  # Japanese words too
    assert word not in restate(text).split()  # never shown


@pytest.mark.parametrize(
    ("text", "kind", "not_kind"),
    [
        ("I am allergic to penicillin.", "allergy", "dose"),
        ("My birthday is May 3.", "birthday", "schedule"),
        ("Never schedule meetings before 10am.", None, "schedule"),
        ("My wife's name is Yumi.", "family", "relationship"),
    ],
)
def test_slot_readings_that_skewed_search(text: str, kind: str | None, not_kind: str) -> None:
    kinds = {s.kind for s in read(text).slots}
    assert not_kind not in kinds and (kind is None or kind in kinds)


def test_slot_readings_that_still_hold() -> None:
    assert "dose" in {s.kind for s in read("I take antihistamines for my hay fever allergy.").slots}
    assert "schedule" in {s.kind for s in read("My birthday party is on Saturday at 7.").slots}
    assert "relationship" in {s.kind for s in read("I'm married to Yumi.").slots}


def test_restate_of_plain_text_adds_nothing() -> None:
    assert restate("ok thanks") == "ok thanks"
    assert restate("No.") == "No."
    assert restate("User prefers short answers.") == "User prefers short answers."
    assert restate("") == "(empty message)"
    assert restate("   ") == "(empty message)"
    long = restate("hello " * 200)
    assert len(long) == 500 and long.endswith("…")


def test_restate_is_idempotent() -> None:
    once = restate("We moved to Portland.")
    assert restate(once) == once


# --- changing facts on language nobody tuned the rules for (issue 23) ------------------

#: Updates stated inside a request, a long chatty turn, or a colon note.
UPDATES_IN_CONTEXT: list[tuple[str, str]] = [
    ("I live in Ghent.", "Now that I live in Utrecht, can you find me a climbing gym nearby?"),
    (
        "I work at Norvik Logistics.",
        "Quick one. I handed in my notice at Norvik Logistics and start at Halden Bank on "
        "Monday, so could you help me write a goodbye note to the team?",
    ),
    ("My rent is 950 a month.", "The rent has gone up to 1,020, can you redo my budget?"),
    ("User's phone number: 0612 555 019.", "User's phone number: 0687 555 233."),
    ("The quarterly review is on 3 June.", "The quarterly review is on 10 June."),
    ("I take 10 mg of amlodipine.", "My GP upped my amlodipine to 20 mg, can you remind me?"),
    ("I call my uncle every Friday.", "My uncle passed away last week."),
    ("My fiancé Tomas and I are getting married in May.", "Tomas and I got married on Saturday!"),
    ("My email is ines.k@mailbox.org.", "Please use my new email, ines@kstudio.eu, from now on."),
    (
        "I've stopped running because of my knee.",
        "I picked running back up, three mornings a week.",
    ),
    ("I drive a VW Golf.", "I sold the Golf last week."),
    ("I drink coffee every morning.", "I've gone off coffee, it's green tea now."),
    ("金沢に住んでいます。", "富山に引っ越したので、近くの歯医者を探してくれる？"),
    ("家計簿アプリの名前は「コツコツ帳」です。", "家計簿アプリの名前を「マメログ」に変えました。"),
    ("Usual order: flat white.", "Usual order: cortado."),
]

#: Look-alikes: the older memory still holds.
STILL_TRUE: list[tuple[str, str]] = [
    # a move retires the residence only
    ("I was born in Munich.", "We finally moved to Lisbon last month."),
    ("I grew up in Munich.", "We finally moved to Lisbon last month."),
    ("My favourite bakery in Munich is Zöttl.", "We finally moved to Lisbon last month."),
    ("I work as a nurse at a hospital in Munich.", "We finally moved to Lisbon last month."),
    ("I studied in Munich.", "We finally moved to Lisbon last month."),
    ("My parents live in Munich.", "We finally moved to Lisbon last month."),
    ("I live in Leeds.", "I was born in Leeds."),
    ("東京出身です。", "大阪に引っ越しました。"),
    # facts that add up
    ("I have asthma.", "I was diagnosed with type 2 diabetes last week."),
    ("花粉症です。", "先週、喘息と診断されました。"),
    ("I have a dog named Pip.", "We adopted a kitten called Miso."),
    ("I speak Spanish.", "I'm learning Japanese now."),
    ("I have a dentist appointment on Friday.", "I have a physio appointment on Monday."),
    # a denial of another thing
    ("I'm allergic to penicillin.", "I'm not allergic to cats."),
    ("I'm allergic to penicillin.", "Turns out I'm not allergic to cats after all."),
    ("ペニシリンにアレルギーがあります。", "猫アレルギーではありません。"),
    # the same word, another thing
    ("I play golf on Sundays.", "I sold my Golf and bought a Polo."),
    ("I drive a VW Golf.", "I've given up golf, my back can't take it."),
    ("I play golf on Sundays.", "I traded in the Golf for a Polo."),
    ("I drive a Golf.", "I played golf with my boss on Saturday."),
    # someone else, a supposition, a question, a story, a quote, the past
    ("I live in Oslo.", "My sister just moved to Bergen."),
    ("I live in Oslo.", "If I moved to Bergen, would my commute be shorter?"),
    ("I live in Oslo.", "Should I move to Bergen?"),
    ("I live in Oslo.", "Write a story where I live in Bergen."),
    ("I live in Oslo.", "I lived in Bergen in 2010."),
    ("I'm vegetarian.", "My friend said 'I'm vegan now' at lunch."),
    ("I'm vegetarian.", "Translate 'I am no longer vegetarian' into French."),
    ("My manager is Dana.", "My sister's manager is Raj."),
    ("I drive my sister to school every day.", "My sister passed her driving test!"),
    ("I love horror films.", "My girlfriend hates horror films, so we watch comedies."),
    # a Japanese topic that is a person or a time names no attribute: two facts, no frame
    ("ユーザーは花粉症。", "ユーザーはマスクを常に持っている。"),
    ("ユーザーの兄は四十歳。", "ユーザーの兄は毎晩ジムに通う。"),
    ("週末は山に登ります。", "週末は家事が多い。"),
    # the user is no token two facts share; one of several is not how many
    ("ユーザーは来月に引っ越しの手続きをする。", "ユーザーはジムの契約をやめた。"),
    ("ユーザーの犬の一匹は柴犬。", "ユーザーの犬は二匹になった。"),
    ("ユーザーの名前は直樹。", "ユーザーの祖母の旧姓は田中。"),
    # someone else's news, in Japanese
    ("妻と二人暮らしです。", "同僚が最近離婚したらしく、元気がない。"),
    ("妻と娘がいます。", "幼なじみとは小学校からの付き合い。"),
    ("ユーザーの結婚指輪はゴールド。", "ユーザーは昨年離婚した。"),
    # someone's words to the user, an earlier occasion, a word in another sense or role
    ("I'm in a choir.", "My mum always said, 'You'll give up singing by spring,' years ago."),
    ("We're flying to Crete in May.", "The Crete holiday we booked back in 2018 got cancelled."),
    ("I need to focus on my thesis this term.", "Sold the Focus last week, I ride an e-bike now."),
    ("i support Hartley Albion, always have", "dont live in hartley anymore, moved to Dunmore"),
    ("My partner is a teacher.", "Don't live in Hartley anymore, moved in with my partner."),
    (
        "I have a library card.",
        "Don't have a car anymore, sold it when my daughter passed her test.",
    ),
    ("There's a tea kettle on my desk.", "I've given up tea entirely, it's only water now."),
    ("My flat has a smoke detector in every room.", "I quit smoking two months ago."),
    ("My role involves lots of spreadsheets.", "Got promoted to team lead last month!"),
    ("A friend of mine works at a bakery.", "I start my new job on Monday."),
    ("I work in a warehouse.", "I work the night shift, 10pm to 6am."),
    ("The gym fee went up in March.", "My gym class moved to Thursdays at 7pm."),
    ("薬は朝食の後に飲むようにしている。", "痛み止めの薬が一日三回に増えました。"),
    # an earlier one of the thing
    ("I ride a Trek bike to work.", "My previous bike was stolen from the station."),
    ("今は社内の新しいアプリ開発を担当している。", "前のプロジェクトは途中で中止になった。"),
    ("週末は祖母の家に行く予定。", "祖母の家の猫が先週亡くなった。"),
    # another owner's thing; a preference that is not a correction
    ("会社のプリンターはキヤノン。", "家のプリンターはブラザーに買い替えました。"),
    ("I drink coffee every morning.", "I like tea, not coffee."),
    ("My sister is a nurse.", "My brother is Tom."),
    ("Please reply to me in German.", "Could you answer this one in French?"),
    ("Call me Ngozi.", "Please call me when the report is ready."),
]

STILL_CHANGES: list[tuple[str, str]] = [
    # the same kinds, when they do change
    ("ユーザーは大阪に住んでいる。", "ユーザーは京都に住んでいる。"),
    ("ユーザーは毎朝緑茶を飲む。", "ユーザーは毎朝ほうじ茶を飲む。"),
    ("私の上司は佐伯さんです。", "私の上司は森下さんになった。"),
    ("ユーザーは犬を二匹飼っている。", "ユーザーの犬は三匹になった。"),
    ("ユーザーは車を買う予定。", "ユーザーは車の購入をやめた。"),
    ("I'm in a choir.", "I quit the choir last month."),
    ("I'm a junior designer at Pixel Co.", "Got promoted to senior designer last week!"),
    ("I smoke about ten a day.", "I quit smoking two months ago."),
    ("I live in Hartley.", "dont live in hartley anymore, moved to Dunmore"),
    ("My yoga class is on Mondays at 6pm.", "My yoga class moved to Thursdays at 7pm."),
    ("痛み止めの薬を一日二回飲んでいる。", "痛み止めの薬が一日三回に増えました。"),
    ("I drive an old Honda Civic.", "Finally sold my old Civic!"),
    # an attribute changed to a value, a value set aside, a value changed from
    ("User's last name is Moreau.", "User changed her last name to Lindqvist after marrying."),
    ("ユーザーの名字は森。", "ユーザーは結婚して名字が石井になった。"),
    ("家のプリンターはキヤノン。", "家のプリンターはブラザーに買い替えました。"),
    ("My physio session is Friday at 10am.", "Sorry: the physio is Thursday at 10am, not Friday."),
    ("連絡は電話でお願いします。", "連絡は電話じゃなくてメールでお願いします。"),
    ("チーム名は「若葉」です。", "チーム名が「若葉」から「紅葉」に変わりました。"),
    # a frame with one value: "my watch is ...", a subject's own verb
    ("My phone is a Pixel 6.", "My phone is a Pixel 8."),
    ("The choir meets on Mondays at 7pm.", "The choir meets on Wednesdays at 7pm."),
    # laid off from the place the old job names; a new manager after the old one left
    ("User works at Norling Foods as a buyer.", "User was laid off from Norling Foods last month."),
    ("My manager is Anika Shah.", "Anika left, so my new manager is Rob Ellis."),
    ("I teach chemistry at Oakfield College.", "I left teaching last year and now I run a bakery."),
    ("I cycle to work on my blue Raleigh.", "Someone nicked my Raleigh from the rack yesterday."),
    ("Address me as Dr Okoye.", "Please address me as Ngozi from now on."),
    ("Please reply to me in German.", "From now on could you answer in French?"),
    ("タブレットはiPadを使っています。", "タブレットをGalaxy Tabに機種変しました。"),
    ("柴犬のハナを飼っています。", "ハナは先月の終わりに亡くなりました。"),
]


@pytest.mark.parametrize(("old", "new"), STILL_CHANGES)
def test_the_narrowed_rules_still_retire_a_real_change(old: str, new: str) -> None:
    assert [i for i, _ in find_superseded(new, [old])] == [0], (old, new)


@pytest.mark.parametrize(("old", "new"), UPDATES_IN_CONTEXT)
def test_an_update_inside_a_request_or_a_long_turn_supersedes(old: str, new: str) -> None:
    assert [i for i, _ in find_superseded(new, [old])] == [0], (old, new)


@pytest.mark.parametrize(("old", "new"), STILL_TRUE)
def test_a_look_alike_retires_nothing(old: str, new: str) -> None:
    assert find_superseded(new, [old]) == (), (old, new)


def test_the_precise_rules_are_a_subset() -> None:
    # the same frame with no change word is the offline judge's own; an explicit end is precise
    related = ["I cycle to work through the park.", "I drive a VW Golf.", "I live in Oslo."]
    new = "I cycle to work along the canal. I sold the Golf."
    everything = find_superseded(new, related)
    precise = find_superseded(new, related, precise=True)
    assert [i for i, _ in everything] == [0, 1] and [i for i, _ in precise] == [1]


@pytest.mark.parametrize(
    ("old", "new", "retired"),
    [
        (
            "I have a dentist appointment on the 3rd.",
            "I have a dentist appointment on the 20th.",
            False,
        ),
        (
            "I have a dentist appointment on Friday.",
            "I have a dentist appointment on Monday.",
            False,
        ),
        (
            "I have a dentist appointment on Friday.",
            "My dentist appointment moved to Monday.",
            True,
        ),
        ("The team offsite is on 7 March.", "The team offsite is on 14 March.", True),
    ],
)
def test_appointments_on_different_days_add_up_unless_one_moved(
    old: str, new: str, retired: bool
) -> None:
    assert bool(find_superseded(new, [old])) is retired


def test_a_chatty_turn_goes_with_its_replaced_fact_but_a_second_fact_keeps_it() -> None:
    related = [
        "I just moved into my flat in Austin, the kitchen is tiny but I love the neighbourhood.",
        "I live in Austin and I work at Dell.",
        "Any good taco places near my place in Austin?",
        "I was born in Austin and I love tacos.",
        "My boyfriend Daniel and I live in Austin.",
    ]
    found = find_superseded("We moved to Denver last week, can you help me find a gym?", related)
    # the aside ("the kitchen is tiny") and a request's passing mention go with the move;
    # a job and a birthplace keep theirs; "Daniel and I" is one subject, not two clauses
    assert [i for i, _ in found] == [0, 2, 4]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My book club meets on the first Thursday.", "I gave away most of my paper books."),
        (
            "User prefers vegetarian meals on flights.",
            "User wants an aisle seat on long-haul flights.",
        ),
    ],
)
def test_a_word_in_another_role_retires_nothing(old: str, new: str) -> None:
    # "book" modifies "club"; a new verb and object are a second preference, not a new value
    assert find_superseded(new, [old]) == ()


#: A second hostile probe (issue 24): a denial, the past, a quote, a story or a request to
#: write or translate, and an end that names another thing, retire nothing.
PROBE_CONTROLS: list[tuple[str, str]] = [
    ("I am allergic to penicillin.", "I'm not allergic to cats."),
    ("I am allergic to penicillin.", "I'm no longer allergic to cats."),
    ("ペニシリンアレルギーがあります。", "猫アレルギーではありません。"),
    ("I live in Sendai.", "I used to live in Tokyo"),
    ("I live in Sendai.", "I lived in Tokyo when I was a kid"),
    ("I live in Sendai.", "When I was a kid I lived in Tokyo."),
    ("仙台に住んでいます。", "昔は東京に住んでいた"),
    ("I live in Sendai.", "'I live in Tokyo' is what my brother says"),
    ("I live in Sendai.", "My brother says: I live in Tokyo"),
    ("I live in Sendai.", "She told me: I moved to Tokyo."),
    ("I live in Sendai.", "Tell the user: I live in Tokyo"),
    ("仙台に住んでいます。", "「東京に住んでいる」と兄は言う"),
    ("I live in Sendai.", "Write a story where I live in Tokyo"),
    ("I live in Sendai.", "Translate to French: I moved to Tokyo."),
    ("仙台に住んでいます。", "東京に住んでいる話を書いて"),
    ("I work as a nurse.", "My character in the game works as a pilot"),
    ("I am married to Yumi.", "In the movie, I divorced my wife"),
    ("I work at Sony.", "I don't work at Google anymore."),
    ("I work at Sony.", "I quit my job at Google."),
    ("I am married to Yumi.", "I'm not married to Aiko anymore."),
    ("My boyfriend is Taro.", "I broke up with Ken."),
    ("I'm a member of the hiking club.", "I quit the chess club."),
]

#: The same rules still retire the very thing named.
PROBE_CHANGES: list[tuple[str, str]] = [
    ("I work at Sony.", "I quit my job at Sony."),
    ("My boyfriend is Taro.", "I broke up with Taro."),
    ("I'm a member of the hiking club.", "I left the hiking club."),
    ("I drive a Toyota Corolla.", "I sold the Corolla to Ken."),
    ("I live in Sendai.", "I don't live in Sendai anymore, I moved to Osaka."),
    ("I teach maths at Fernleigh High.", "I left teaching and I'm now a designer at Quillpath."),
]


@pytest.mark.parametrize(("old", "new"), PROBE_CONTROLS)
def test_a_denial_the_past_a_quote_or_a_story_retires_nothing(old: str, new: str) -> None:
    assert find_superseded(new, [old]) == (), (old, new)


@pytest.mark.parametrize(("old", "new"), PROBE_CHANGES)
def test_an_end_of_the_very_thing_still_retires_it(old: str, new: str) -> None:
    assert [i for i, _ in find_superseded(new, [old])] == [0], (old, new)
