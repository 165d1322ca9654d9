"""Vocabularies of how facts change, for the offline supersession detector (data, not logic).

General English and Japanese grammar of change, not the words of particular examples:
how a clause is said (a request, a question, a wish, a story, the past), the verbs that
end a state (quit, sold, stolen, put down, 辞めた, 別れた...), that decide a plan, that
rename, that move a number, and the kinds of fact that add up rather than replace each
other (allergies, diagnoses, pets, children, languages, hobbies, likes). Compiled with
``cues.rx`` (English as words, Japanese as substrings) over lowercased text.
``clauses.py`` and ``supersession.py`` decide what they mean together.
"""

from __future__ import annotations

import re

from aimem.judges.heuristic.cues import STOPPED_JA, rx

# --- how a clause is said ---------------------------------------------------------------

#: Where a sentence divides into clauses that can each state a fact ("…the deposit has
#: gone up to 900, can you help me redo the budget?" is a statement, then a request).
CLAUSE_BREAK = re.compile(
    r"\s*(?:;|\s[—–]\s|—|\s-\s|\(|\))\s*"
    r"|,\s*(?=(?:but|so|and|because|since|though|although|as|which|who|plus|then|"
    r"can you|could you|would you|will you|any (?:tips|ideas|suggestions|advice|thoughts|"
    r"recommendations)|please|what|how|where|which|should|do you|is there|are there)\b)"
    r"|\s(?=(?:but|because|since|now that|given that|seeing as|so (?:can|could|would|please)|"
    r"and (?:can|could|would) you)\b)"
    r"|(?<=[\u3040-\u30ff\u4e00-\u9fff])(?:ので|けど|けれど|けれども)、?|(?:から|が|て)、"
    r"|、(?=(?:でも|だから|なので|それで))",
    re.I,
)
#: Sentence ends (a clause never spans two sentences).
SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|(?<=[.!?])$|\n+|(?<=[。！？!?])")
#: A short lead-in before a colon ("Quick update: ...", "FYI: ..."): not part of the fact.
LEAD_IN = re.compile(
    r"^(?:quick (?:one|update|note|question|thing)|update|updates|fyi|btw|news|heads[- ]up|"
    r"note|edit|correction|ps|p\.s\.|ok so|okay so|so|also|reminder|small update|"
    r"life update|big news|good news|bad news|sad news)\s*:\s*"
    r"|^[^:]{1,30}:\s+(?=(?:i|we|i'm|we're|i've|we've|my|our|so|just|finally)\b)",
    re.I,
)

#: Lead-ins after which a clause states a fact ("since we moved…", "now that I've quit…").
STATED_LEAD = re.compile(
    r"^(?:and |but |so |plus |then )?(?:since|now that|because|cause|'cause|given that|"
    r"seeing as|as of (?:now|today|this \w+)|after|ever since)\s+"
)
#: Lead-ins that make a clause a supposition ("if we moved…", "once I sell the car…").
SUPPOSED_LEAD = re.compile(
    r"^(?:and |but |so )?(?:if|when|whenever|once|in case|unless|suppose|supposing|"
    r"imagine|what if|assuming|say|let's say|pretend|before)\b"
)
#: Openers of a question or request to the assistant: nothing in such a clause is stated.
ASKING = re.compile(
    r"^(?:and |but |so |also |ok |okay |hey |hi |oh )?(?:can|could|would|will|should|shall|"
    r"do|does|did|is|are|am|was|were|have|has|what|what's|whats|where|which|who|whom|"
    r"whose|why|how|when|any|anything|please|pls|help|tell|remind|give|show|suggest|"
    r"recommend|write|draft|make|find|list|explain|translate|plan|let's|lets|need help|"
    r"i need (?:help|some|a few|ideas|advice|tips)|i'd like (?:help|some|you|a)|"
    r"i want you to|wondering|thoughts|ideas|tips|advice)\b"
)
#: What the user needs now is part of the request, not a fact to keep ("I need a new GP").
NEEDING = re.compile(
    r"^(?:and |but |so )?(?:i|we)(?: (?:need|needed|am trying to|are trying to|am looking for|"
    r"are looking for|want|would like|was wondering|were wondering|have a question|"
    r"got a question|could use|would love)|'m (?:trying to|looking for)|"
    r"'re (?:trying to|looking for)|'d (?:like|love))\b"
)
ASKING_JA = re.compile(
    r"(?:てくれる|てくれない|てもらえる|てもらえない|てください|て下さい|てほしい|て欲しい|"
    r"教えて|手伝って|考えて|お願い|ますか|ませんか|でしょうか|ですか|かな|だろうか|どう)"
    r"[。?？!！\s]*$|[?？]\s*$"
)
#: A supposition, wish, undecided plan or guess: not a settled fact.
UNSETTLED = rx(
    r"thinking about|thinking of|considering|might|maybe|perhaps|possibly|whether|would|"
    r"could|wish|hope|hoping|hopefully|want to|wants to|wanna|would like|i'd like|"
    r"dream of|dreaming of|tempted|not sure|unsure|debating|deciding|looking into|"
    r"someday|one day|probably|likely|wondering|may be|torn between|weighing|"
    r"on the fence|if i|if we|in case|supposed to|trying to decide",
    ja="かもしれ|かも|たいと思|たいな|したい|検討|考えて|考え中|迷って|悩んで|ようかな|"
    "だろう|でしょう|たら|なら|れば",
)
#: An intention that is not done yet: a plan (a later decision or cancellation replaces it).
PLANNED = rx(
    r"going to|gonna|planning|plan to|plans to|intend|intending|aiming to|hoping to|"
    r"will|i'll|we'll|about to|thinking about|thinking of|considering|want to|"
    r"would like to|looking at|torn between|selling|listed|for sale|up for sale",
    ja="予定|つもり|計画|したい|検討|考えて|迷って",
)
#: A story, a game, a quote, a translation or an example: not the user's own fact.
UNREAL = rx(
    r"(?:write|tell|make up|compose|draft|create|generate|invent) (?:me |us )?(?:a|an|the|some) "
    r"(?:\w+ ){0,2}(?:story|stories|poem|tale|novel|fiction|screenplay|script|scene|dialogue|"
    r"song|lyrics|joke|example|sentence)|story where|story about|story in which|"
    r"in (?:the|my|this|a|our) (?:game|movie|film|book|show|series|novel|story|play|dream|"
    r"simulation|campaign|fic|fanfic|scenario)|my (?:character|sim|avatar|oc|persona)|"
    r"the character|roleplay|role-play|role play|let's pretend|pretend (?:that|i|we|you|to)|"
    r"imagine (?:that|i|we|you|if)|hypothetically|translate|translation|translating|"
    r"example sentence|as an example|for example|quote (?:from|by|me|him|her|them|this)|"
    r"quoting|in quotes|tell (?:the user|him|her|them)|"
    r"is what (?:\w+ ){1,3}(?:says|said|thinks|claims|believes)|fictional|fiction|dreamt|"
    r"dreamed|what if|"
    r"^[^:]{0,40}\b(?:say|says|said|tell|tells|told|ask|asks|asked|write|writes|wrote|text|"
    r"texts|texted|post|posts|posted|reply|replies|replied|claim|claims|claimed)(?: me| us)?\s*:",
    ja="物語|小説|ストーリー|ゲームで|ゲームの中|キャラ|役で|役の|夢で|夢の中|翻訳|訳して|英訳|"
    "和訳|例文|セリフ|台詞|と言って|って言って|と言われ|という設定|設定で|もしも|話を書|話を作|"
    "お話|」と|」って|』と|』って",
)
#: Quotation marks around words the user reports rather than states.
QUOTED = re.compile(r"[\"“”「」『』]|(?:^|\s)'[^']{6,}'(?=\s|$|[,.!?])")
#: The past that no longer holds: "I used to live…", "when I was a kid", 子供の頃.
HISTORIC = rx(
    r"used to|use to|when i was|when we were|as a kid|as a child|as a teen|as a teenager|"
    r"growing up|grew up|in my (?:teens|twenties|thirties|youth|childhood)|back in|"
    r"years ago|decades ago|back then|at the time|in college|in high school|at uni|"
    r"formerly|previously|once upon|in the past|for a while there|back when",
    ja="昔|子供の頃|子どもの頃|小さい頃|幼い頃|学生時代|学生の頃|若い頃|以前|かつて|前は(?<!名前は)|当時",
)
#: A moment, not a standing fact ("I had pasta for lunch today").
EPISODE = rx(
    r"today|tonight|yesterday|this morning|this afternoon|this evening|last night|"
    r"earlier today|just now|a minute ago|an hour ago|on the way|right now|at the moment",
    ja="今日|今朝|今夜|昨日|昨夜|さっき|先ほど",
)
#: A stop that says it is temporary ("no running for a few weeks", "cancelled this week").
TEMPORARY = rx(
    r"for (?:a|the|the next)? ?(?:few|couple of|couple)? ?(?:days?|weeks?|months?)|for now|"
    r"for the time being|temporarily|this (?:week|weekend|month|morning|evening|(?:mon|tues|"
    r"wednes|thurs|fri|satur|sun)day)|today|tonight|until|till|on hold|paused|pausing",
    ja="しばらく|一時的|今週|今日|今夜|当分|休止",
)
#: What the user heard rather than a fact of theirs.
HEARSAY = rx(r"apparently|i heard|rumou?r|supposedly|reportedly", ja="らしい|そうです|だそう")
#: Requests to the assistant ("please stop suggesting podcasts"): not the end of a fact.
INSTRUCTION = rx(
    r"please|stop (?:suggesting|sending|recommending|reminding|asking|mentioning|using|"
    r"calling|saying)|don't (?:suggest|send|remind|recommend|mention|ask|call me|use)|"
    r"never (?:suggest|send|remind|recommend|mention)|remind me",
    ja="ないでください|ないで下さい|しないで|やめてください",
)

# --- what a clause says happened ---------------------------------------------------------

#: A state ended, by the user's act (the thing ended follows: "sold the Corolla").
END_ACT = rx(
    r"quit|quitted|quitting|stopped|stopping|gave up|given up|give up|giving up|sold|selling|"
    r"stole|nicked|pinched|swiped|"
    r"cancell?ed|cancell?ing|dropped|ditched|dumped|left|leaving|resigned|retired|"
    r"closed|shut down|ended|ending|terminated|gave away|given away|got rid of|donated|"
    r"traded in|trading in|scrapped|wrote off|lost|moved out of|broke up with|split up with|"
    r"split from|divorced|unsubscribed from|uninstalled|deleted|rehomed|returned|"
    r"came off|come off|weaned off|cut out|kicked|pulled out of|withdrew from|"
    r"dropped out of|let (?:my|our|the) \w+ lapse|backed out of|called off|abandoned|"
    r"finished with|done with|moved away from|switched away from|parted ways with|"
    r"gave notice|handed in my notice|put down|put to sleep|gone off|went off|going off|"
    r"kicked the habit|"
    r"gave (?:the|my|our|his|her) \w+ (?:to|away)",
    ja=f"やめ|辞め|{STOPPED_JA}|退会|解約|退職|引退|手放|売っ|売り|売却|譲っ|処分|廃車|別れ|離婚|"
    "中止|キャンセル|取りやめ|卒業|解消|脱退|退部|退団",
)
#: A state ended by an event (the thing ended comes first: "the car got stolen").
END_EVENT = rx(
    r"was sold|got sold|been sold|was stolen|got stolen|been stolen|stolen|was cancell?ed|"
    r"got cancell?ed|been cancell?ed|is cancell?ed|was scrapped|written off|totall?ed|"
    r"was closed|closed down|shut down|is closing|was discontinued|discontinued|"
    r"was put down|put to sleep|was rehomed|got adopted|was adopted|ran away|died|"
    r"passed away|passed on|is gone|are gone|has gone|was towed|repossessed|demolished|"
    r"was laid off|got laid off|laid off|was fired|got fired|was let go|got let go|"
    r"expired|lapsed|fell through|is over|is off|are off|ended|broke down for good|"
    r"went bust|went under|folded|no more|broke up|split up|separated",
    ja="盗まれ|亡くな|死ん|他界|いなくな|閉店|閉鎖|終了|なくなっ|無くなっ|潰れ|倒産|"
    "廃止|解雇|クビ|中止に|キャンセルに|壊れ",
)
#: "not … any more", "no longer": a state denied from now on.
NO_LONGER = rx(
    r"no longer|not anymore|not any more|any ?more|never again|not \w+ing anymore|"
    r"stopped being|not … anymore",
    ja="もう.{0,12}(?:ない|ません|ていない|てない)|しなくなっ|やめて|じゃなくなっ|ではなくなっ",
)
#: An earlier one of a thing: ending it ends nothing the user holds now.
PREVIOUS = re.compile(
    r"\b(?:my|our|the) (?:(?:previous|former) \w+|ex-\w+)"
    r"|(?:^|[、。\s]|(?<=[はがをもで]))(?:前|以前|元|昔|先代)の"
)
#: The value a correction sets aside: "Tuesday the 9th, not Monday", "電話じゃなくてチャット".
NOT_VALUE = re.compile(
    r"(?:,|;|—|–)\s*(?:and )?not (?:on |at |in |the |my |a |an )?(?P<v>[\w.'&+-]+(?: [\w.'&+-]+)?)"
    r"\s*(?:[.,;!?)]|$)|\brather than (?:the |my |a |an )?(?P<w>[\w.'&+-]+)"
    r"|(?P<ja>[^\s、。はがを「」]{1,12})」?(?:じゃなくて|ではなくて|じゃなく|ではなく)"
)
#: An attribute changed to a new value: "changed his surname to Brandt", "名字が大野になった",
#: "プリンターはエプソンに買い替えました". The attribute is what the old fact must state.
ATTRIBUTE_CHANGED = re.compile(
    r"\b(?:changed|switched|updated|changing|switching) (?:my|her|his|their|our|the) "
    r"(?P<en>\w+(?: \w+)?) (?:to|over to)\b"
    r"|(?<![\u4e00-\u9fff\u30a0-\u30ffー々])(?!ユーザー)(?P<ja>[\u4e00-\u9fff\u30a0-\u30ffー々]{2,8})(?:が|は|を)[^、。]{1,16}?(?:に|へ)"
    r"(?:なった|なりました|変わった|変わりました|変更し|買い替え|乗り換え|替え|換え|機種変)"
)
#: A Japanese change from a named value: "「若葉」から「紅葉」に変わりました".
FROM_VALUE_JA = re.compile(
    r"「?(?P<v>[^\s、。はがを「」]{1,12})」?から「?[^\s、。]{1,12}?(?:に|へ)"
    r"(?:変わ|変更|替え|換え|乗り換え|切り替え|移|なりました|なった)"
)
#: A correction: the old fact was never true ("not actually allergic").
CORRECTION = rx(
    r"not actually|actually not|actually i'm not|actually i am not|turns out i'm not|"
    r"turns out i am not|turns out|never was|never were|was wrong|were wrong|"
    r"i was mistaken|misdiagnos\w*|false alarm|not really",
    ja="勘違い|間違い|誤診|実は.{0,10}(?:ない|ません)",
)
#: A plain negation of the predicate ("I'm not allergic to cats").
NEGATION = re.compile(
    r"\b(?:not|never|no|don't|doesn't|didn't|isn't|aren't|wasn't|weren't|won't|can't|"
    r"cannot|haven't|hasn't|hadn't|do not|does not|did not|is not|are not|am not)\b"
    r"|(?:ない|ません|ず[。、]|ではなく|じゃなく)"
)
#: A stop undone: back, again, rejoined, resumed.
RESUME = rx(
    r"again|back on|back to|back at|back in|back into|picked \w+ back up|resumed|restarted|"
    r"rejoined|re-?enrolled|returned to|came out of retirement|un-?cancell?ed|reinstated|"
    r"on again|back together|reconciled|got back|made up|back up",
    ja="また|再開|再び|復帰|戻っ|戻り|仲直り|よりを戻|再入会",
)
#: A value moved on: the new one stands, whatever the old one was.
CHANGED = rx(
    r"now|nowadays|these days|currently|anymore|any more|from now on|as of|no longer|"
    r"switched|switching|changed|changing|moved|moving|replaced|replacing|swapped|"
    r"traded|upgraded|downgraded|instead|renamed|rescheduled|postponed|pushed|delayed|"
    r"brought forward|moved up|bumped|reduced|increased|decreased|lowered|raised|upped|"
    r"doubled|halved|cut|went up|gone up|goes up|going up|went down|gone down|goes down|"
    r"up to|down to|dropped to|rose to|risen to|climbed to|fell to|jumped to|"
    r"turned into|became|become|becomes|promoted|transferred|updated|corrected|new|"
    r"latest|rebooked|reopened|just got|started|starting|took up|taken up|got a|got an|"
    r"turned \d+|just turned|"
    r"bought|picked up|adopted|decided|chose|went with|going with|settled on",
    ja="変更|変わ|変え|今は|今では|現在|替え|乗り換え|切り替え|移動|延期|前倒し|ずれ|増え|"
    "減っ|減ら|増や|上が|下が|にしました|になりました|になった|に決め|新しい|新しく|最近は",
)
#: "switched from X to Y", "X instead of", "replaced X with": the old value named by a
#: verb of substitution (a move "from Austin" names a city, not a thing replaced).
FROM_VALUE = re.compile(
    r"\b(?:instead of|replaced|replacing|traded in|trading in|swapped|swapping|"
    r"switched (?:\w+ ){0,3}from|switching (?:\w+ ){0,3}from|changed (?:\w+ ){0,2}from|went from|"
    r"upgraded from|downgraded from|converted from|moved on from|ditched|dropped)\s+"
    r"(?:my |our |the |a |an )?(?P<v>[\w.'&+-]+(?: [\w.'&+-]+)?)"
)
#: A plan settled: decided, booked, signed up ("I've decided on Vienna for my master's").
DECIDED = rx(
    r"decided|decide on|chose|chosen|picked|went with|going with|settled on|booked|"
    r"signed up|enrolled|registered|accepted|committed to|confirmed|locked in|"
    r"it's official|final answer|we're doing|i'm doing|called off|not doing|"
    r"not going|cancell?ed|scrapped|off the table|after all",
    ja="決め|決定|決まっ|申し込ん|予約し|確定|中止|やめ|キャンセル|にしました|にした|にすることに",
)
#: A new name: "renamed to", "goes by", "changed my name", 改名.
RENAMED = re.compile(
    r"\b(?:renamed|rebranded|re-?titled|now called|now named|is called \w+ now|"
    r"goes by|go by|changed (?:my|our|his|her|their|the) (?:\w+ )?(?:name|surname|username|"
    r"handle|title)|new (?:name|surname|username|handle|title)|took (?:his|her|my) "
    r"(?:name|surname)|married name|maiden name)\b"
    r"|改名|(?:名前|名字|苗字|名称|タイトル)(?:を|が).{0,20}?(?:に)?(?:変え|変わ|変更)|旧姓|呼び名"
)

# --- facts that add up ---------------------------------------------------------------------

#: An added fact on the same topic: never a replacement.
ADDED = re.compile(
    rx(
        r"also|as well|another|second|third|added|adding|in addition|besides|on top of|"
        r"one more|an extra|additionally|along with|as well as|plus",
        ja="追加|さらに|二匹目|2匹目|二台目|2台目|二人目|2人目|もう一|ほかにも|他にも|以外にも|"
        "両方",
    ).pattern
    + r"|\btoo\b(?=\s*(?:[.,!;:)—–-]|$|\b(?:and|but|so|now|at|on)\b))"
    + r"|(?<=[\u4e00-\u9fff\u30a0-\u30ffにとでa-z0-9])も(?![のうっしちろ])"
)
#: Predicates of facts that accumulate: a second allergy, diagnosis, pet, child,
#: language or hobby adds to the first; only an explicit end retires one of them.
ACCUMULATING = rx(
    r"allergic|allergy|allergies|intolerant|intolerance|diagnosed|diagnosis|condition|"
    r"suffer from|suffers from|speak|speaks|speaking|fluent|learning|learn|studying|"
    r"play|plays|playing|like|likes|love|loves|enjoy|enjoys|into|fan of|collect|collects|"
    r"visited|visit|visiting|been to|went to|travelled to|traveled to|met|know|knows|"
    r"watch|watching|read|reading|follow|following|member of|volunteer|volunteering|"
    r"adopted|have a|has a|got a|have an|has an|got an|took up|picked up|started learning|"
    r"son|daughter|kid|kids|child|children|baby|friend|friends|hobby|hobbies|"
    r"side gig|side job|side hustle|also work",
    ja="アレルギー|診断|持病|話せ|話し|勉強|習って|習い|趣味|好き|ファン|ハマって|行った|"
    "訪れ|飼い始め|息子|娘|子ども|子供|友達|友人",
)
#: Words that make a frame single-valued: one favourite, one usual, one current.
SINGLE_VALUED = rx(
    r"favou?rite|usual|main|primary|current|only|go-to|preferred|regular|default|"
    r"number|address|email|rent|salary|deposit|price|budget|name|surname|username|"
    r"birthday|deadline|date|time|due|title|role|position|job|employer|boss|manager|"
    r"dose|dosage|weight|height|size|age|score|balance|limit|goal|target|plan|"
    r"partner|husband|wife|boyfriend|girlfriend|fianc[eé]e?|landlord|doctor|gp|dentist",
    ja="一番|いつもの|メイン|現在の|今の|住所|番号|メール|家賃|給料|予算|名前|名字|苗字|"
    "誕生日|締め切り|締切|期限|日程|役職|担当|上司|体重|目標",
)

# --- words of a frame ----------------------------------------------------------------------

#: Words dropped before two clauses are compared: they mark when, not what.
FRAME_FILLER = frozenset(
    "now currently nowadays actually just still really anymore finally officially "
    "recently lately already so well oh um uh okay ok btw fyi update quick hey also "
    "basically honestly literally definitely totally pretty".split()
)
#: Function words: a frame needs more than these in common.
FUNCTION = frozenset(
    "a an the and or but to of in on at for with from by as is are was were be been being "
    "am it its this that these those i me my mine we us our ours you your he she him her "
    "his they them their there here who what when where which how why than then so if "
    "not no do does did done have has had having will would can could should may might "
    "must shall user user's users up down out off over into onto about after before "
    "around through just very really quite too also only some any all each every more "
    "most much many one ones get got gets getting go goes went going gone make makes made "
    "usually always often sometimes normally typically generally "
    "take takes took taken use uses used using s 's t ll re ve d m".split()
)
#: Contractions opened before two clauses are compared.
CONTRACTIONS = (
    (re.compile(r"\b(i|you|we|they)'m\b"), r"\1 am"),
    (re.compile(r"\b(i|you|we|they)'re\b"), r"\1 are"),
    (re.compile(r"\b(i|you|we|they)'ve\b"), r"\1 have"),
    (re.compile(r"\b(i|you|we|they|he|she)'ll\b"), r"\1 will"),
    (re.compile(r"\b(i|you|we|they|he|she)'d\b"), r"\1 would"),
    (re.compile(r"\b(it|he|she|that|there|what|who)'s\b"), r"\1 is"),
    (re.compile(r"\bcan't\b"), "can not"),
    (re.compile(r"\bwon't\b"), "will not"),
    (re.compile(r"\b(\w+)n't\b"), r"\1 not"),
    (re.compile(r"\bim\b"), "i am"),
)
#: The copula, for reading "Genmaicha is my usual order" as "my usual order is genmaicha".
COPULA = frozenset("is are was were".split())
#: Possessives and determiners that open a definite attribute ("my usual order").
DEFINITE = frozenset("my our the user's his her their your".split())

#: People: a differing span naming one is another person's fact, not a new value.
PERSON_WORDS = frozenset(
    "i me my we our you he she him her his they them their mom mum mother dad father "
    "parents son daughter kid kids child children wife husband partner boyfriend "
    "girlfriend fiance fiancee brother sister sibling grandma grandpa grandmother "
    "grandfather aunt uncle cousin niece nephew friend colleague coworker boss manager "
    "neighbour neighbor roommate flatmate teacher doctor".split()
)

#: Ends of ownership ("sold the Golf") and ends of an activity ("gave up golf"): a sale
#: ends a thing owned, never a thing played; quitting ends a thing done, not one driven.
ENDS_OWNING = rx(
    r"sold|selling|traded in|trading in|scrapped|wrote off|written off|gave away|given away|"
    r"got rid of|donated|returned|stolen|totall?ed|repossessed|towed|rehomed",
    ja="売っ|売り|売却|手放|譲っ|処分|廃車|盗まれ",
)
ENDS_DOING = rx(
    r"quit|quitted|quitting|stopped|stopping|gave up|given up|give up|giving up|dropped|"
    r"kicked|gone off|went off",
)
#: How a clause holds its thing: owned ("I drive a Golf") or done ("I play golf").
OWNING = rx(
    r"have|has|had|own|owns|drive|drives|driving|bought|got|ride|rides|keep|my|our|"
    r"the user's|user's",
    ja="持って|乗って|買っ|飼っ",
)
DOING = rx(
    r"play|plays|playing|do|does|doing|go|goes|practi[cs]e|practi[cs]es|train|trains|"
    r"training|into|love|loves|enjoy|enjoys|every|weekly|on (?:mon|tues|wednes|thurs|fri|"
    r"satur|sun)days",
    ja="して|やって|通って|習って|毎週|趣味",
)
#: "Allergic", "like", "speak": stems of a predicate, which say nothing of the thing itself.
PREDICATE_WORDS = (
    "allergic allergy allergies intolerant intolerance diagnosed diagnosis condition "
    "like likes love loves enjoy enjoys speak speaks learn learning study studying play "
    "playing watch read follow eat eats drink drinks take takes"
)
