"""The offline judge's conversation vocabularies: what a turn tells versus how it reacts.

A turn of conversation mixes two kinds of sentence. Some *tell*: a personal event ("I
went to a pottery class last Friday"), a plan or decision ("I've decided to apply"), a
change of state ("I started a new job"), a feeling disclosed, a named person, place,
date or number. Others only *react*: acknowledgements, praise for the other speaker
("That's awesome!", "You're so talented"), greetings and questions back ("What inspired
you?"). ``judge.py`` reads the telling sentences for cues and treats the reacting ones as
chatter. Like ``cues``, these are broad syntax-level lists (tense, pronouns, temporal
expressions), not the words of particular conversations.

Most of what a user says to an assistant *asks* for something ("Write a 300-word summary
of the Cold War", "How do I reverse a list?"). A request tells nothing about the user, even
when its topic is weighty (a war, a disease, a divorce rate), unless part of it is theirs:
a first-person clause ("I live in Denver, so which day trips...") or a thing of theirs
("my landlord, Mr. Patel", "my Honda Fit"). The second half of this module finds requests,
the frames that only lead into one ("how do I", "I need a"), the things a request works on
("my essay", "my code"), the answers that mean nothing out of context ("No.", "はい"), and
what a change says it replaces ("from $1,450", "not the 12th").
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aimem.judges.heuristic.cues import CJK_RUN, DATE, PROPER_NOUN, rx

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
    r"|(?:^|、)(?:私の|僕の|俺の|うちの|ユーザーの)?(?:車|自転車|バイク|パソコン|スマホ|携帯|時計|カメラ|"
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
#: A thing of one's own named: "my Honda Fit", "our Nikon Z6" (matched on the original case).
OWNED_NAME = re.compile(r"(?<![\w'])(?:[Mm]y|[Oo]ur) (?:[a-z]+ ){0,2}[A-Z][\w-]+")

# --- requests -------------------------------------------------------------------------------

#: Words a request opens with: an imperative of a task, "can you", "please", a question word.
_OPENERS = (
    r"write|rewrite|draft|compose|explain|summari[sz]e|translate|list|give|tell me|tell us|"
    r"show me|show us|make|create|generate|suggest|recommend|compare|describe|define|"
    r"calculate|compute|convert|solve|fix|debug|check|proofread|edit|correct|shorten|expand|"
    r"simplify|paraphrase|condense|tidy|turn|outline|plan|brainstorm|design|build|find|name|"
    r"pick|choose|estimate|analy[sz]e|evaluate|review|organi[sz]e|prepare|continue|redo|"
    r"try|break down|walk me|teach me|quiz me|help me|help us|help with|let's|let me know|"
    r"come up with|think of|can you|could you|would you|will you|can u|could u|"
    r"do you know|is there|are there|is it|any (?:tips|ideas|advice|suggestions|thoughts)|"
    r"how (?:do|does|did|can|could|should|would|to|much|many|long|often|far|is|are|about)|"
    r"what(?:'s| is| are| was| were| does| do| did| should| would| can| could| if| about)|"
    r"whats|which|why (?:is|are|do|does|did|would|should|can|not)|"
    r"where (?:is|are|can|do|should|did)|when (?:is|are|did|does|do|should|will|was)|"
    r"who (?:is|was|are|were|wrote|invented|discovered)|please|pls|plz"
)
#: A sentence that asks for help rather than tells: it opens with a request word, after a
#: filler ("so", "ok", "hey", "also").
REQUEST_OPENING = re.compile(
    r"^\W*(?:(?:so|now|also|and|ok|okay|hey|hi|oh|well|btw|anyway|quick question|"
    r"one more thing|next)\W+)*(?:" + _OPENERS + r")\b"
)
#: First-person leads into a request: "I need a...", "I want to understand...", "I'm curious".
I_FRAME = re.compile(
    r"^\W*(?:so |also |and |ok |okay |hey |hi )?(?:"
    r"i (?:need|want|would like|'d like|d like) (?:you|a|an|some|help|ideas|advice|tips|to "
    r"(?:know|understand|learn|see|find|figure|write|make|get|ask|create|improve))|"
    r"i(?:'ve| have)? (?:always |often |sometimes )?(?:wonder(?:ed)?|wondering)|"
    r"i (?:have|had|got) (?:a|one|another|two|some) (?:quick )?(?:questions?|doubts?)|"
    r"i(?:'m| am) (?:looking for|curious|confused|stuck|lost|not sure|wondering|unsure|"
    r"trying to (?:understand|figure|learn|decide|find|remember|write|make)|interested in)|"
    r"i (?:keep|always) (?:mixing|confusing|forgetting|getting)|"
    r"i (?:was|am|'ve been) (?:reading|thinking|watching|listening) (?:about|to)|"
    r"i (?:don't|do not|can't|cannot) (?:understand|get|figure|remember|decide)"
    r")"
)
#: "I" inside a question's inversion ("how do I", "what should I", "can I"): asking, not telling.
ASKING_I = re.compile(
    r"\b(?:do|does|did|can|could|should|would|will|shall|may|might|must|am|are|have|if|"
    r"whether)(?: not)? (?P<who>i|we)\b"
)
#: A request to the listener, as opposed to a question about them ("What inspired you?").
ASKS_YOU = rx(
    r"can you|could you|would you|will you|can u|could u|would you mind|do you know|"
    r"are you able|do you have|can you please|could you please|would you please|"
    r"have you (?:got|any)|what do you (?:think|recommend|suggest)|thank you|thanks"
)
#: Standing wishes: "always", "never", "from now on" make an imperative an instruction.
STANDING = rx(
    r"always|never|from now on|every time|whenever|by default|going forward|in future|"
    r"in the future|don't ever|do not ever|remember (?:that|to)|make sure|don't|do not|"
    r"dont|stop|avoid|no more",
    ja="いつも|常に|今後|これから|毎回|絶対|一切|必ず|"
    "話して|呼んで|返信して|返事して|答えて|接して",
)

# --- what is the user's own, inside a request ------------------------------------------------

#: Where a first-person clause or phrase starts: "I live...", "my landlord", "As a nurse".
ANCHOR = re.compile(
    r"(?<![\w'])(?:i|i'm|im|i've|i'd|i'll|we|we're|we've|we'd|my|our|mine|ours)(?![\w'])"
    r"|^\W*as an? (?=\w)",
)
#: Where such a clause ends: a sentence or clause mark, or a comma before the ask.
ANCHOR_END = re.compile(
    r"[.;:!?()\[\]\"“”「」]|,\s*(?=(?:can|could|would|will|how|what|which|who|where|when|why|"
    r"is|are|do|does|should|any|please|so|but|and|tips|ideas|help|suggest|recommend|"
    r"thoughts|advice)\b)"
)
#: The material a request works on ("my essay", "my code"): a thing of the moment, not a
#: fact about the user.
TASK_OBJECT = re.compile(
    r"(?:my|our) (?:\w+ )?(?:essay|code|script|function|loop|program|query|regex|paragraph|"
    r"sentences?|text|draft|bio|cover letter|letter|email|e-mail|message|notes|slides|"
    r"presentation|homework|assignment|report|questions?|answers?|grammar|writing|story|"
    r"poem|post|thread|list|error|bug|output|file|files|spreadsheet|table|document|doc|"
    r"tweet|caption|speech|title|outline|summary|translation|prompt|chart|graph|plot|"
    r"project proposal|thesis statement|argument|point|idea|ideas|understanding|mistake|"
    r"approach|version|attempt|solution|formula|math|problem|calculation|playlist|toast)\b"
)
#: Japanese: a sentence asking for something ("教えて", "作ってください", "…は？").
JA_ASKS = re.compile(
    r"(?:(?:て|で)(?:ください|下さい|ほしい(?:です)?|もらえ(?:ますか|ませんか|る)?|"
    r"いただけ(?:ますか|ませんか)|くれ(?:ますか|ない|る)?)|お願い(?:します|できますか)?|ください|"
    r"下さい|(?:教え|作っ|書い|考え|まとめ|見|調べ|挙げ|立て|直し|訳し|し|詠ん|添削し|組ん|"
    r"出し)て|[？?]|ますか|ですか|でしょうか|とは|って何|は|"
    r"[0-9０-９一二三四五六七八九十]+(?:個|問|つ|冊|案|行|文字|字))[。！!：:\s]*$"
)
#: "World War I", "Part I": a numeral, not the speaker (matched on the original case).
NUMERAL_I = re.compile(
    r"[A-Z][a-z]+ I(?=\s*(?:[.,;:!?)]|$)|\s(?:to|the|a|an|and|or|of|in|on|for|with|from|"
    r"ended|began|era|history|veterans?)\b)"
)
#: What a request goes on with in its next sentence: "Keep it under 200 words.", "No jargon."
REQUEST_TAIL = re.compile(
    r"^\W*(?:please |pls )?(?:keep|use|be|make|format|add|avoid|include|skip|limit|no|not|"
    r"only|just|short|shorter|bullet|it's for|this is for|that's for|in|for|with|without|"
    r"under|max|maximum|at most|thanks|thank you|cheers|ty)\b"
)
#: Japanese clause breaks before the ask: "...ので、", "...んですが、", "...けど、".
JA_CLAUSE = re.compile(r"(?<=[、,])")
#: Japanese things of the user's own: family, home, work, money, body (the "my" is dropped).
JA_ANCHOR = re.compile(
    r"私|わたし|僕|俺|自分|うちの|我が家|家族|妻|夫|嫁|旦那|息子|娘|兄|姉|弟|妹|母|父|両親|"
    r"彼氏|彼女|祖母|祖父|孫|地元|実家|上司|部下|同僚|職場|会社|家賃|愛車|通勤|持病|主治医|"
    r"親友|幼なじみ|ペット|飼って|住んで|在住|勤め|働いて|担当|誕生日|課長|部長|社長|店長|"
    r"主任|先輩|後輩|生まれ育|出身|育った|があるので|があって|通って|習って"
)
#: Japanese material of a request: "私のコード", "私の文章".
JA_TASK_OBJECT = re.compile(
    r"(?:私|僕|俺|自分)の(?:コード|文章|文|作文|メール|レポート|宿題|資料|プレゼン|スライド|"
    r"履歴書|答え|質問|説明|計算|翻訳|考え|投稿|ブログ)"
)

# --- answers that mean nothing out of context -----------------------------------------------

#: A whole turn made of these says nothing on its own: "No.", "Yes, a lot.", "Not yet.".
BARE_ANSWER = re.compile(
    r"^[\W\d_]*(?:(?:yes|yeah|yea|yep|yup|ya|no|nope|nah|nay|never|always|sometimes|often|"
    r"rarely|usually|maybe|perhaps|probably|possibly|definitely|certainly|absolutely|sure|"
    r"ok|okay|k|kk|fine|right|true|false|correct|exactly|indeed|of course|not really|not at "
    r"all|not yet|not sure|not much|no idea|no way|i don't know|i dunno|dunno|idk|i guess|"
    r"i think so|i don't think so|kind of|kinda|sort of|a lot|lots|a little|a bit|a few|"
    r"some|none|all|both|neither|either|mostly|once|twice|thrice|go on|please|thanks|"
    r"thank you|ty|thx|lol|haha|hmm+|mm+|uh+|um+|ah+|oh+|the (?:first|second|third|last|"
    r"other|former|latter)(?: one)?|just the (?:first|second|third|last)(?: one)?|"
    r"all of (?:them|it)|none of (?:them|it)|option [a-e1-5]|[a-e]|more|less|same|again|"
    r"please do|go ahead|yes please|no thanks|no thank you|not now|later|too|very|so|"
    r"really|just|only|it|that|this|one|them|me|too|and|or|but|then|well|good|great|cool|"
    r"nice)(?:[\W\d_]+|$))+$"
)
BARE_ANSWER_JA = re.compile(
    r"^[\W\s]*(?:はい|いいえ|いや|ええ|うん|ううん|そう|そうです|そうだね|たぶん|多分|まあまあ|"
    r"まあ|たくさん|少し|少しだけ|ちょっと|ちょっとだけ|全然|まだ|まだです|もう|両方|どっちも|"
    r"どちらも|最初の|二つ目|一つ目|三つ目|一回|二回|結構|特に|ない|ないです|あります|です|"
    r"だけ|で|ね|よ|かな|かも|お願いします|ありがとう|了解|OK|ok|笑|草|[、。！？!?\s])+$"
)

#: Japanese: a clause stating the speaker's state ("住んでいるんですが", "続けているので").
JA_STATE = re.compile(
    r"て(?:いる|います|いて|いた|いました|る|た)|んです|んだけど|なので|なんですが|ですが|ですけど"
)

#: Words (stemmed, as ``statement.read`` gives them) that requests share without sharing a
#: fact: "can you help me write...", "remind me what I need to bring".
ASKING_WORDS = frozenset(
    "help write make tell give show plan draft suggest recommend remind need want know bring "
    "prepar updat chang new now week schedul redo fix list check adjust move first tip idea "
    "what how which best good way can could would should pleas thank".split()
)
#: Japanese: a clause before the ask telling the speaker's state, an event or a date.
JA_SITUATION = re.compile(
    "|".join(p.pattern for p in (JA_STATE, EVENT_JA, CHANGE, DATE)), re.IGNORECASE
)

#: A name set just before a first-person phrase: "Mr. Patel, my landlord", "Boise, where I".
APPOSITIVE = re.compile(r"\b[A-Z][\w'.-]*(?: [A-Z][\w'.-]*)*,? (?:where |who |which )?$")
#: Quoted material a request works on: it is not the user speaking.
QUOTED = re.compile(r'"[^"]*(?:"|$)|\u201c[^\u201d]*(?:\u201d|$)|「[^」]*(?:」|$)|『[^』]*(?:』|$)')

#: A day or a time of day: what dates a note of one's own ("MRI on March 14 at 9:30").
DAY = re.compile(
    r"(?<![a-z0-9])(?:\d{1,2}(?:st|nd|rd|th)|\d{1,2}:\d\d)(?![a-z0-9])|\d+月\d+日"
    r"|(?<![a-z])(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2}(?![0-9])"
)


def speaks(sentence: str, low: str) -> bool:
    """Whether "I", "my" or "we" speaks in ``sentence`` (not "World War I")."""
    return bool(ANCHOR.search(low)) and not NUMERAL_I.search(sentence)


def particular(part: str, named: bool) -> bool:
    """A name, a digit or a title in ``part``: "like I'm five" or "tomorrow" is none."""
    names = PROPER_NOUN.findall(f" {part}" if named else part)  # a leading name counts
    return bool(names or TITLE.search(part) or any(c.isdigit() for c in part))


def own_parts(sentence: str) -> Iterator[tuple[str, bool, bool]]:
    """The first-person parts of a request: (part, led by a name, possessive).

    A part runs from "I", "my", "we" or a leading "As a" to the end of its clause, with a
    name set just before it ("Mr. Patel, my landlord"); "how do I" or "I need a" only lead
    into the request, and "my essay" or "my code" is the material it works on. Japanese
    drops "my": a clause naming the user's family, home, work or money, or one before the
    ask stating the user's situation ("...に住んでいるんですが、").
    """
    text = QUOTED.sub(" ", sentence)
    if CJK_RUN.search(text):
        *before, ask = [c for c in JA_CLAUSE.split(text) if c.strip()] or [""]
        told = [c for c in before if JA_ANCHOR.search(c) or JA_SITUATION.search(c)]
        told += [ask] if JA_ANCHOR.search(ask) else []
        yield from ((c, False, True) for c in told if not JA_TASK_OBJECT.search(c))
        return
    low = text.lower()
    leads = {m.start("who") for m in ASKING_I.finditer(low)}
    leads |= {m.end() - 1 for m in NUMERAL_I.finditer(text)}
    frame = I_FRAME.match(low)
    end = frame.end() if frame else 0
    for m in ANCHOR.finditer(low):
        if m.start() < end or m.start() in leads:
            continue
        stop = ANCHOR_END.search(low, m.end())
        end = stop.start() if stop else len(low)
        if not TASK_OBJECT.match(low, m.start()):
            named = APPOSITIVE.search(text, 0, m.start())
            part = text[named.start() if named else m.start() : end].strip(" ,")
            yield part, bool(named), low.startswith(("my", "our"), m.start())


#: A number as written, the particular a change names: "$1,450", "4B", "7:40", "75 mg".
NUMBERED = re.compile(r"(?<![\w])\d[\d,.:]*[a-z]*")

#: What a change says it replaces: "from $1,450", "not the 12th", "left Brightwater",
#: "moved off the Helios launch", "(it was 50 mg)", "（前は仙台）", "仙台から".
REPLACED = re.compile(
    r"\b(?:from|not|instead of|no longer|left|quit|off|cancell?ed|sold|retired|traded in|"
    r"replaced|was|were|used to be|previously|formerly|don't|doesn't|didn't)\b"
    r"([^.;:!?()\n]{0,40})"
    r"|(?:前は|以前は|元は|これまで|もともと|旧)([^）)。、]{0,20})|([^、。（(\s]{1,20})から"
)
#: Japanese particulars: names in kanji or katakana, dates, amounts ("仙台", "7万2千円").
JA_PARTICULAR = re.compile(r"[\u4e00-\u9fff\u30a0-\u30ff]{2,}|\d+月\d+日|\d[\d万千円.,]*")


def particulars(body: str) -> frozenset[str]:
    """Numbers, dates and names in ``body``, but not a name addressing the listener."""
    called = " ".join(VOCATIVE.findall(body))
    names = {n.lower() for n in PROPER_NOUN.findall(f" {body}") if n not in called}
    low = body.lower()
    found = (NUMBERED, DATE, JA_PARTICULAR) if CJK_RUN.search(low) else (NUMBERED, DATE)
    return frozenset(names.union(*(p.findall(low) for p in found)))
