"""The faithfulness guard flags distorted interpretations and passes faithful paraphrases."""

from __future__ import annotations

import pytest

from aimem.judges.faithfulness import unfaithful_reason

FAITHFUL = [
    # the paraphrases good models give
    ("I'm allergic to penicillin", "The user is allergic to penicillin."),
    ("I moved from Sendai to Sapporo", "The user now lives in Sapporo (moved from Sendai)."),
    ("東京に住んでいます", "ユーザーは東京に住んでいる。"),
    ("私の娘の名前はさくらです", "The user's daughter is named Sakura."),
    ("I prefer tea over coffee", "User prefers tea over coffee."),
    ("My mother passed away", "The user's mom died."),
    ("父は医者です", "The user's father is a doctor."),
    ("母が先月亡くなった", "The user's mother died last month."),
    ("夫と二人暮らし", "ユーザーは夫と二人で暮らしている。"),
    ("My brother Ken lives in Berlin", "Ken, the user's brother, lives in Berlin."),
    ("My sister's name is Emma", "The user's sister is named Emma."),
    ("My name is Syui", "The user's name is Syui."),
    ("Call me Syui", "The user wants to be called Syui."),
    ("I speak English and Japanese", "The user speaks English and Japanese."),
    ("I use VS Code", "The user uses VSCode."),
    ("I visit my grandma every Sunday", "The user visits their grandmother on Sundays."),
    ("My boss, Mr. Suzuki, is strict", "The user's boss Suzuki is strict."),
    ("I'm a mother of two", "The user has two children."),
    ("When I was a kid I played piano", "The user played piano in childhood."),
    ("I think I'm getting a cold", "The user may be catching a cold."),
    # kin synonyms and generalisations
    ("My son plays soccer", "The user's child plays soccer."),
    ("My kids love pizza", "The user's children love pizza."),
    ("My mom and dad live in Osaka", "The user's parents live in Osaka."),
    ("My wife and I have 3 kids", "The user and their spouse have three children."),
    ("私のいとこはパリに住んでいる", "The user's cousin lives in Paris."),
    ("we adopted a puppy", "The user adopted a dog."),
    ("私は３人兄弟の長男です", "The user is the eldest son of three siblings."),
    ("彼女とは3年付き合っている", "The user has been dating their girlfriend for 3 years."),
    ("彼女はコーヒーが好き", "She likes coffee."),
    ("I have no siblings", "The user is an only child."),
    ("I'm an only child", "The user has no siblings."),
    # words that merely contain a kin word
    ("大丈夫です", "The user is fine."),
    ("私の母語は日本語です", "The user's native language is Japanese."),
    ("My mother tongue is Japanese", "The user's native language is Japanese."),
    ("猫舌なので熱いものが苦手", "The user has trouble with hot food."),
    ("My pet peeve is loud chewing", "The user hates loud chewing."),
    # negation kept in other words
    ("I don't eat meat", "The user is vegetarian."),
    ("I don't eat meat", "The user avoids meat."),
    ("I don't like coffee", "The user dislikes coffee."),
    ("I'm not a fan of jazz", "The user isn't fond of jazz."),
    ("I can't swim", "The user is unable to swim."),
    ("I never smoked", "The user is a non-smoker."),
    ("I'm not married", "The user is single."),
    ("I no longer work at Google", "The user left Google."),
    ("I haven't been to Kyoto", "The user has never visited Kyoto."),
    ("I'm lactose intolerant", "The user can't have dairy."),
    ("I can't eat shellfish", "The user has a shellfish allergy."),
    ("I'm not good at math", "The user struggles with math."),
    ("I didn't sleep well", "The user slept poorly."),
    ("Not sure if I'll go to the party", "The user is unsure about going to the party."),
    ("I do not drink", "The user abstains from alcohol."),
    ("I never drink coffee after 3pm", "The user avoids coffee after 3 p.m."),
    ("コーヒーは飲めない", "The user cannot drink coffee."),
    ("お酒は飲まない", "ユーザーはお酒を飲まない。"),
    ("コーヒーが嫌い", "The user dislikes coffee."),
    ("お酒をやめた", "The user no longer drinks alcohol."),
    ("I quit smoking last year", "The user no longer smokes."),
    ("I'm vegan", "The user does not eat animal products."),
    ("I live alone", "The user doesn't live with anyone."),
    ("I hate mornings", "The user doesn't like mornings."),
    # negations that are idioms, not negated facts
    (
        "Don't forget my dentist appointment on Friday",
        "The user has a dentist appointment on Friday.",
    ),
    ("I can't wait for the trip to Okinawa", "The user is excited about the trip to Okinawa."),
    ("I don't mind spicy food", "The user is fine with spicy food."),
    ("It is not only fast but also cheap", "The user finds it fast and cheap."),
    ("明日は行かなければならない", "The user must go tomorrow."),
    ("嫌いじゃない", "The user likes it."),
    # numbers reformatted
    ("I'm 42 years old", "The user is 42."),
    ("I have two kids", "The user has 2 children."),
    ("My daughter's birthday is 2024-05-03", "The user's daughter was born on 3 May 2024."),
    ("My dog Max is 3", "The user's dog, Max, is three years old."),
    ("The meeting is at 15:00", "The user's meeting is at 3 p.m."),
    ("Meeting at 7:00 tomorrow", "The user has a meeting at 7 a.m. tomorrow."),
    ("家賃は10万円", "The user's rent is 100,000 yen."),
    ("Budget is $1,500", "The user's budget is 1500 dollars."),
    ("I sleep 7.5 hours", "The user sleeps 7.5 hours."),
    ("I run 5k every morning", "The user runs 5 km each morning."),
    ("私には子供が2人いる", "ユーザーには子供が二人いる。"),
    ("２０２４年５月に結婚した", "The user married in May 2024."),
    ("I work from 9 to 5", "The user works nine to five."),
    ("I'm in my 20s", "The user is in their twenties."),
    ("My phone number is 090-1234-5678", "The user's phone number is 090-1234-5678."),
    # names, romanised or transliterated
    ("ゆうきくんと遊んだ", "The user played with Yuuki."),
    ("しょうたくんは友達", "Shota is the user's friend."),
    ("ミケという名前の猫を飼っている", "The user has a cat named Mike."),
    ("マックスという名前の犬がいる", "The user has a dog named Max."),
    ("ジョージという名前の犬", "The user has a dog named George."),
    ("私はさくらちゃんが好き", "The user likes Sakura."),
    ("My daughter Sakura is 5", "ユーザーの娘さくらは5歳。"),
    ("I climbed Mt. Fuji", "The user climbed Mount Fuji."),
    ("うちの猫の名前はまだない", "The user's cat has no name yet."),
    ("I work with Tanaka", "ユーザーは田中さんと働いている。"),
    # "you" in the content may stay
    ("Remember that you should call me Syu", "The user wants the assistant to call them Syu."),
]

DISTORTED = [
    # (content, interpretation, a word the reason must name)
    ("私の娘の名前はさくらです", "Syui's mother's name is Sakura", "mother"),
    ("My mother passed away", "Syui passed away", "mother"),
    ("My daughter loves piano", "The user's son loves piano.", "son"),
    ("I have a cat", "The user has a dog.", "dog"),
    ("私の息子は10歳", "The user's daughter is 10.", "daughter"),
    ("妻は看護師です", "The user's husband is a nurse.", "husband"),
    ("お母さんが入院した", "The user was hospitalised.", "お母さん"),
    ("I like cats", "The user likes cats and their mother.", "mother"),
    ("さくらちゃんと遊んだ", "The user played with a friend.", "friend"),
    ("I don't eat meat", "The user eats meat.", "don't"),
    ("I eat meat", "The user does not eat meat.", "not"),
    ("I love my job", "The user does not love their job.", "not"),
    ("I'm not vegetarian", "The user is vegetarian.", "not"),
    ("お酒は飲まない", "The user drinks alcohol.", "ない"),
    ("仕事が好き", "ユーザーは仕事が好きではない。", "ではな"),
    ("I have never been to Paris", "The user has been to Paris.", "never"),
    ("I'm 42 years old", "The user is an adult.", "42"),
    ("I have two kids", "The user has children.", "two"),
    ("My PIN is 4321", "The user has a PIN.", "4321"),
    ("３時に起きる", "The user wakes up early.", "3"),
    ("Born in 1985", "The user was born in the 80s.", "1985"),
    ("I met Ken", "The user met someone.", "Ken"),
    ("I work with Tanaka at Google", "The user works at a tech company.", "Tanaka"),
    ("ミケという名前の猫を飼っている", "The user has a cat.", "ミケ"),
    ("I love tea", "You love tea.", "you"),
    ("I love tea", "Your favourite drink is tea.", "your"),
    ("お茶が好き", "あなたはお茶が好きです。", "あなた"),
]


@pytest.mark.parametrize(("content", "interpretation"), FAITHFUL)
def test_faithful_paraphrases_pass(content: str, interpretation: str) -> None:
    assert unfaithful_reason(content, interpretation) is None


@pytest.mark.parametrize(("content", "interpretation", "term"), DISTORTED)
def test_distortions_are_flagged_naming_the_term(
    content: str, interpretation: str, term: str
) -> None:
    reason = unfaithful_reason(content, interpretation)
    assert reason is not None
    assert term in reason
    assert "\n" not in reason and len(reason) < 200


@pytest.mark.parametrize(
    "content",
    [
        "I like sushi",
        "tea is nice",
        "東京に住んでいる",
        "Prefers Rust [score=0.80]",
        "My daughter is 5 and I don't like Mondays [supersedes=1,2]",
        "私の娘の名前はさくらです",
    ],
)
def test_content_quoted_verbatim_always_passes(content: str) -> None:
    assert unfaithful_reason(content, "Interpreted: " + content) is None
    assert unfaithful_reason(content, "  Interpreted:\n" + content.replace(" ", "  ")) is None


@pytest.mark.parametrize("interpretation", ["Scripted interpretation.", "User likes tea.", ""])
@pytest.mark.parametrize("content", ["I like sushi", "tea is nice", "ラーメンが好き", "hello"])
def test_nothing_checkable_means_nothing_flagged(content: str, interpretation: str) -> None:
    assert unfaithful_reason(content, interpretation) is None


def test_markers_are_ignored() -> None:
    assert unfaithful_reason("Prefers tea [score=0.80]", "The user prefers tea.") is None
    assert unfaithful_reason("Likes tea [supersedes=1,2]", "The user likes tea.") is None
    assert unfaithful_reason("[score=0.80]", "Anything at all.") is None


def test_only_the_first_problem_is_reported_in_the_documented_order() -> None:
    reason = unfaithful_reason("My mother is 70", "Your father is old.")
    assert reason is not None and "third person" in reason
    reason = unfaithful_reason("My mother is not 70", "The user's father is old.")
    assert reason is not None and "father" in reason and "70" not in reason


def test_reasons_read_as_instructions_for_a_re_ask() -> None:
    assert unfaithful_reason("私の娘の名前はさくらです", "Syui's mother's name is Sakura") == (
        'the content is about the user\'s daughter ("娘"), but the interpretation says "mother"'
    )
    assert unfaithful_reason("I'm 42", "The user is an adult.") == (
        "the content says 42, the interpretation leaves it out"
    )
    assert unfaithful_reason("I don't smoke", "The user smokes.") == (
        'the content is negated ("don\'t"), the interpretation is not'
    )
    assert unfaithful_reason("I smoke", "You smoke.") == (
        'the interpretation addresses the user ("you"); write about them in the third person'
    )
