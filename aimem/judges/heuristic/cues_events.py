"""The offline judge's conversation vocabularies: what a turn tells versus how it reacts.

A turn of conversation mixes two kinds of sentence. Some *tell*: a personal event ("I
went to a pottery class last Friday"), a plan or decision ("I've decided to apply"), a
change of state ("I started a new job"), a feeling disclosed, a named person, place,
date or number. Others only *react*: acknowledgements, praise for the other speaker
("That's awesome!", "You're so talented"), greetings and questions back ("What inspired
you?"). ``judge.py`` reads the telling sentences for cues and treats the reacting ones as
chatter. Like ``cues``, these are broad syntax-level lists (tense, pronouns, temporal
expressions), not the words of particular conversations.
"""

from __future__ import annotations

import re

from .cues import rx

# --- splitting a turn ------------------------------------------------------------------------

#: "Caroline: I went..." or "Dr. Lee: ..." - a transcript's speaker label, not content.
SPEAKER_LABEL = re.compile(r"^[A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,2}: (?=\S)")
#: Sentence ends: . ! ? (and runs of them), an ellipsis, a dash aside, Japanese 。！？.
SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+|(?<=[。！？!?])|\s+-\s+|\s*[—–]\s*")

# --- sentences that react rather than tell ----------------------------------------------------

#: A question to the other speaker: it asks for news instead of giving any.
QUESTION = re.compile(r"[?？]\s*$|(?:ですか|ますか|でしょうか|かな|の\?)\s*[。]?$")
#: Praise, acknowledgement, sympathy and good wishes aimed at the listener.
REACTION = rx(
    r"wow|whoa|woah|omg|yay|woo+hoo|aw+|congrat\w*|kudos|bravo|well done|way to go|good job|"
    r"great job|nice job|good for you|good luck|best of luck|take care|cheers|thanks|thank you|"
    r"(?:that|this|it|which)(?:'s| is| was| sounds| looks| seems)(?: \w+ly| so| such| really| "
    r"just| pretty| super| totally| absolutely| quite| very)*"
    r" (?:an? )?(?:great|awesome|amazing|cool|nice|lovely|wonderful|fantastic|incredible|"
    r"beautiful|gorgeous|stunning|impressive|inspiring|interesting|fun|sweet|cute|adorable|"
    r"neat|rad|brilliant|exciting|special|huge|tough|hard|rough|sad|scary|crazy|wild|"
    r"awful|terrible|unfortunate|understandable|true|right|fair|good|great news|shame|bummer)|"
    r"sounds (?:like|great|awesome|amazing|fun|cool|good|lovely|wonderful|exciting|nice|tough)|"
    r"looks (?:great|awesome|amazing|cool|good|lovely|beautiful|fun|delicious)|"
    r"(?:so|really|very) (?:cool|awesome|sweet|nice|great|happy for you|glad|proud of you)|"
    r"glad (?:to hear|you|that you|it)|happy (?:to hear|for you)|sorry (?:to hear|about)|"
    r"proud of you|i bet|i hope you|hope you|hope it|hope that|hope things|"
    r"can't wait to (?:see|hear)|"
    r"keep (?:it up|going|up the)|you(?:'re| are) (?:so|such|doing|a|an|really|amazing|awesome|"
    r"right|welcome|the best|gonna|going to)|you(?:'ve| have) (?:got|been|done|made|come)|"
    r"you (?:must|should be|deserve|did|rock|nailed|got this|can do)|"
    r"your \w+ (?:is|are|was|were|sounds?|looks?|seems?)|love (?:that|this|it|your|how you)|"
    r"what a|how (?:cool|nice|awesome|sweet|fun|lovely|exciting|amazing)|no worries|"
    r"totally|absolutely|definitely|exactly|agreed|i agree|same here|me too|for sure|of course|"
    r"you too|likewise|tell me more|talk (?:soon|later)|see you|catch up|anytime|my pleasure",
    ja="すごい|素敵|すてき|いいね|いいですね|よかった|良かった|おめでとう|頑張って|がんばって|"
    "ありがとう|さすが|なるほど|そうなんだ|そうなんですね|楽しそう|美味しそう|おいしそう|"
    "大変だった(?:ね|でしょう)|お大事に|残念",
)
#: The listener as the subject: a turn about "you" records the other speaker's side.
SECOND_PERSON = rx(r"you|you're|you've|you'd|you'll|your|yours|yourself|u|ur")

# --- sentences that tell -------------------------------------------------------------------

#: Irregular past forms English uses for most everyday events.
_IRREGULAR_PAST = (
    r"went|got|made|took|saw|met|won|lost|ran|began|bought|brought|found|gave|had|held|kept|"
    r"left|paid|put|said|sent|sold|spent|told|thought|wore|wrote|became|came|did|drew|drove|"
    r"ate|fell|felt|flew|forgot|grew|heard|knew|led|rode|sang|sat|slept|spoke|stood|swam|"
    r"taught|woke|built|caught|chose|fought|hung|lent|meant|shot|quit|read|set|hit|cut|"
    r"was|were"
)
#: First-person past: "I went", "we finally got", "I've been", "my son started".
EVENT_PAST = re.compile(
    r"(?<![a-z'])(?:i|we|my \w+|our \w+)(?:'ve| have| had|'d)?"
    r"(?: (?:just|finally|also|even|actually|recently|already|then|once|really|totally|"
    r"first|both|all|never|ever|been|\w+ly))* "
    r"(?:" + _IRREGULAR_PAST + r"|been|gone|done|seen|taken|given|won|begun|grown|"
    r"(?!(?:need|feed|seed|speed|proceed|exceed|succeed|indeed|bleed|breed)\b)[a-z]{2,}ed)\b"
)
#: A note with the subject dropped: "Had an audition yesterday.", "Just got new shoes!"
EVENT_IMPLIED = re.compile(
    r"(?:^|[.!?;]\s+)(?:just |finally |also |recently |actually |then |even )?"
    r"(?:" + _IRREGULAR_PAST.replace("|was|were", "") + r"|been|[a-z]{3,}ed)\b(?! (?:by|you)\b)"
)
#: Japanese past tense at a clause end ("行きました", "買った。"): an event, subject dropped.
EVENT_JA = re.compile(
    r"(?:ました|った|んだ|[いきしちにびみりえけせてねべめれ]た)(?=[。！!、]|よ|ね|\s|$)"
)
#: What the speaker is doing these days: "I'm currently training for...", "we're renovating".
ONGOING = re.compile(
    r"(?<![a-z'])(?:i'm|im|i am|we're|we are)(?: (?:currently|now|still|actually|really|"
    r"finally|also|slowly))* (?!going to|gonna|so|really|feeling|glad|sure|sorry|thinking of you)"
    r"[a-z]{3,}ing\b"
)
#: Things the speaker has: "my cork board is full of...", "I've got a guinea pig".
POSSESSION = re.compile(
    r"(?<![a-z'])(?:i have|i've got|ive got|i own|we have|we've got|we own|"
    r"(?:my|our) (?:\w+ )?\w+ (?:is|are|was|were|has|have|had))\b"
    # Japanese drops "my": a thing one owns as the topic ("車はマツダの…", "うちの冷蔵庫は…")
    r"|^(?:私の|僕の|俺の|うちの|ユーザーの)?(?:車|自転車|バイク|パソコン|スマホ|携帯|時計|カメラ|"
    r"タブレット|ゲーム機|テレビ|冷蔵庫|洗濯機|ピアノ|ギター|家|部屋|マンション)(?:は|を)"
)
#: A quoted title or name: "Finding Home", 「君の名は」.
TITLE = re.compile(
    r'"[^"]{2,60}"|\u201c[^\u201d]{2,60}\u201d|\u300c[^\u300d]{1,30}\u300d|\u300e[^\u300f]{1,30}\u300f'
)
#: A dated anchor: when it happened or will. Momentary ones ("today", "just now") are in
#: cues.TRANSIENT, which marks this moment's news rather than a dated event.
WHEN = rx(
    r"yesterday|tomorrow|recently|lately|(?:a |one |the )?(?:few |couple (?:of )?)?"
    r"(?:days?|weeks?|months?|years?|decades?) ago|ago|the other day|"
    r"(?:last|next|this past|this coming|past|coming|previous) (?:\w+ )?"
    r"(?:week|weekend|month|year|summer|winter|spring|fall|autumn|night|time|semester|"
    r"season|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"(?:on |this |that |next |last )?(?:mon|tues|wednes|thurs|fri|satur|sun)day|"
    r"(?:last|on|this|next) fri|"
    r"january|february|march|april|june|july|august|september|october|november|december|"
    r"(?:in|since|by|until|from) (?:19|20)\d\d|since (?:i was|then|childhood|college|school)|"
    r"when i was|as a (?:kid|child|teen|teenager)|growing up|over the weekend|"
    r"for (?:\w+ )?(?:days|weeks|months|years)|anniversary|birthday|holiday",
    ja="昨日|先週|先月|去年|昨年|一昨年|おととい|来週|来月|来年|今年|今月|週末|連休|"
    "年前|ヶ月前|か月前|週間前|日前|前に|頃|ころ|[0-9０-９一二三四五六七八九十]+月|"
    "子供の頃|子どもの頃|学生時代|夏休み|冬休み|正月|お盆",
)
#: Plans, decisions and commitments: what the speaker will do, and chose to.
DECISION = rx(
    r"decided|decide to|made (?:a|the|my) decision|chose to|choosing to|signed up|sign up|"
    r"applied|applying|apply(?:ing)? (?:for|to)|enrolled|enrolling|registered|booked|"
    r"scheduled|committed|intend\w*|i'm (?:going|gonna|planning|"
    r"about|starting|joining|taking|getting|moving|heading|hoping)|we're (?:going|gonna|"
    r"planning|starting|moving|getting|heading|hoping)|looking forward to|"
    r"set (?:a|my) goal|working (?:on|toward|towards)|preparing (?:for|to)|"
    r"lined up|on the calendar",
    ja="決めた|決めました|決心|決意|ことにした|ことにしました|申し込|予約|応募|登録|"
    "するつもり|予定です|始めるつもり|挑戦する|目指して",
)
#: A change of state: something began, ended or became different.
CHANGE = rx(
    r"started|start(?:ing)? (?:a|my|our|to|the)|began|begun|stopped|quit|quitting|"
    r"no longer|not anymore|anymore|switched|became|become|turned into|joined|joining|"
    r"left (?:my|the|our)|finished|completed|got (?:a|my|our) new|new (?:job|home|house|"
    r"place|car|pet|puppy|kitten|baby|school|role|position|apartment|city|hobby|partner|"
    r"friend|friends|project|book|business)|moved|moving|first time|for the first time|"
    r"finally|now i|now we|i now|we now|changed|changing|transition\w*|recovered|"
    r"back (?:to|from|on)|got back|picked up|took up|gave up|launched|opened|published|"
    r"released|won|lost|passed|failed|accepted|rejected|promoted|hired",
    ja="始めた|始めました|やめた|辞めた|やめました|辞めました|変わった|変わりました|"
    "引っ越|初めて|ついに|やっと|新しい|になった|になりました|なくなった|合格|不合格|"
    "受かった|落ちた|入った|卒業した|戻った|復帰",
)
#: A feeling the speaker discloses about their own life ("I was so nervous").
DISCLOSURE = re.compile(
    r"(?<![a-z'])(?:i|i'm|im|i am|i was|i've been|i felt|i feel|it made me|made me|"
    r"left me|i'm feeling|i was feeling|we were|we're|we felt)"
    r"(?: (?:so|really|very|super|pretty|quite|a bit|a little|kind of|kinda|totally|"
    r"absolutely|incredibly|extremely|still|feeling|feel|felt|been))* "
    r"(?:nervous|scared|afraid|terrified|excited|thrilled|stoked|happy|sad|upset|bummed|"
    r"down|stressed|overwhelmed|relieved|grateful|thankful|lonely|hurt|angry|mad|"
    r"frustrated|disappointed|anxious|worried|devastated|heartbroken|crushed|inspired|"
    r"motivated|proud|ashamed|embarrassed|jealous|confused|lost|stuck|exhausted|drained|"
    r"burned out|burnt out|depressed|hopeful|hopeless|moved|touched|blessed|lucky|"
    r"accepted|free|alive|empowered|confident|insecure|homesick|miserable|ecstatic|"
    r"over the moon|on cloud nine|at peace|content|fulfilled|torn|terrible|awful|amazing|"
    r"great|better|worse)\b",
)
DISCLOSURE_JA = re.compile(
    r"(?:緊張|不安|嬉し|うれし|悲し|かなし|寂し|さみし|悔し|くやし|怖か|辛か|つらか|"
    r"落ち込|感動|ほっと|安心|ショック|腹が立|イライラ|幸せ|誇らし|恥ずかし)"
)
#: Plain quantities and counts: a detail that makes a memory particular.
NUMBER = rx(
    r"\d+(?:[.,]\d+)?%?|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|"
    r"fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|dozen|"
    r"third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|twice",
    ja="[0-9０-９]+|一つ|二つ|三つ|[一二三四五六七八九十百千万]+(?:人|匹|回|冊|個|歳|才|年|ヶ月|か月|日|時間|番目)",
)
#: A capitalised word that addresses the listener ("Thanks, Mel!", "Hey Jo,") names no one new.
VOCATIVE = re.compile(
    r"(?:(?:^|[,!.?]\s*)(?:hey|hi|hello|thanks|thank you|wow|yeah|yes|oh|congrats|sorry|"
    r"aw+|ha+|haha|cheers|ok|okay|well|so|right|sure|yep|nope|no|dear|great|cool|nice|"
    r"awesome|hmm|ugh|uh|um|bye|see ya|morning|evening),?\s+|,\s+|^)"
    r"[A-Z][a-z]+(?=\s*(?:[!,.?]|$))"
)
