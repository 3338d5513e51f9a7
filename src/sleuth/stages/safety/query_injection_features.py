"""What the query injection score reads: word classes, not phrasings. Data only.

`sleuth.stages.safety.query_injection_score` holds the logic. Each feature is a class of words
with a part in an order to the assistant:

- who is spoken to: `address` ("you", "你"), `agent` ("the assistant must ...");
- what about it is aimed at: `config`, `prior_config` ("previous instructions"),
  `own_config` ("your system prompt", "the guidance you got");
- what is to be done with it: `override` ("ignore", "忽略"), `switch_off` ("disable",
  "关闭"; weaker, as it is done to any setting), `disclose` ("print", "输出");
- who the assistant is to be: `persona` ("pretend", "扮演"), `unrestricted` ("no
  filters", "不受任何限制");
- where its text is to go: `exfil_target` (a link, an address, "聊天记录");
- the right to give such orders: `authority` ("I am your developer", "授权码"),
  `permission` ("you may now");
- orders about the answer itself: `output_control` ("respond only with", "告诉用户");
- this very conversation: `context` ("this chat", "搜索结果").

Three features are evidence against: a question framing what follows (`framing`:
"how to", "如何"), a topic or discussion word (`topic`: "meme", "paper", "论文") and a
named third-party model being steered (`third_party`: "make ChatGPT ...", "in
LangChain").

A deployment replaces any list from `guard.injection.score.features` in sleuth.yaml.
Entries are regular expressions, matched case-insensitively; the nouns of the
assistant's configuration (`_CONFIG`, `_ZH_CONFIG`) are shared by several features.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["DEFAULT_WEIGHTS", "FEATURES", "Feature"]

Feature = Literal[
    "address",
    "agent",
    "config",
    "prior_config",
    "own_config",
    "override",
    "switch_off",
    "disclose",
    "persona",
    "unrestricted",
    "exfil_target",
    "authority",
    "permission",
    "output_control",
    "context",
    "framing",
    "topic",
    "third_party",
]

#: The weight of each feature in a clause; negative ones are evidence against. A clause
#: counts each feature once, and only its strongest `*config` feature.
DEFAULT_WEIGHTS: dict[Feature, float] = {
    "address": 0.5,
    "agent": 1.0,
    "config": 1.0,
    "prior_config": 1.5,
    "own_config": 2.0,
    "override": 1.5,
    "switch_off": 1.0,
    "disclose": 1.0,
    "persona": 1.5,
    "unrestricted": 1.5,
    "exfil_target": 1.0,
    "authority": 1.5,
    "permission": 1.5,
    "output_control": 1.5,
    "context": 1.0,
    "framing": -1.0,
    "topic": -1.5,
    "third_party": -2.5,
}

# fmt: off

# what the assistant is configured with
_CONFIG = (
    r"(?:instructions?|directions|directives?|guidelines?|guidance|rules|polic(?:y|ies)"
    r"|(?:system\s+)?prompts?|system\s+message|programming|configuration|config"
    r"|restrictions?|filters?|safeguards?|guardrails?|censorship|constraints"
    r"|safety\s+(?:checks?|filters?|protocols?|features?|measures?|settings|rules)"
    r"|content\s+polic(?:y|ies))"
)
_ZH_CONFIG = (
    r"(?:指令|指示|提示词|提示语|系统提示|规则|规定|设定|人设|限制|约束|审查|过滤|准则"
    r"|安全(?:过滤|审查|规则|策略|限制|设置)|内容(?:政策|策略|规则)|道德(?:限制|约束|准则))"
)
# what a clause may put between "your" and the noun: "your full original system prompt"
_MODIFIERS = (
    r"(?:(?:own|full|exact|complete|entire|original|initial|first|hidden|secret|internal"
    r"|current|real|true|actual|underlying|core|default|safety|content|system|previous"
    r"|prior|earlier|old|base|built-in|developer|operating|ethical|moral)\s+){0,3}"
)
_MODELS = r"(?:AI|assistant|model|chatbot|bot|LLM|agent|language\s+model|GPT|ChatGPT)"
_NAMED_MODELS = (
    r"(?:ChatGPT|GPT-?\d[\w.]*|Claude|Gemini|Copilot|Bard|Llama|Mistral|Midjourney|LangChain"
    r"|LlamaIndex|Bing\s+Chat|Siri|Alexa|DeepSeek|文心一言|通义千问|豆包|Kimi)"
)

FEATURES: dict[str, dict[Feature, list[str]]] = {
    "en": {
        "address": [
            r"\b(?:you|your|yours|yourself|you['’](?:re|ve|ll|d))\b",
            # a vocative: "hey assistant,", "ChatGPT:"
            rf"(?:^|[.!?]\s*)(?:(?:hey|hi|hello|dear|ok|okay)\s+)?{_MODELS}\s*[,:!]",
            # an order with "me" as its object is spoken to someone: "read me", "tell me"
            r"\b(?:tell|give|show|read|send|teach|sing|write|recite)\s+me\b",
        ],
        "agent": [
            rf"\b(?:the|this|any|all|every)\s+{_MODELS}s?\s+(?:must|should|shall|will|is\s+now"
            r"|reading|that\s+reads|processing|has\s+been|may\s+now|can\s+now)\b",
            rf"\b(?:to|for|attention)\s+(?:the\s+|any\s+|all\s+)?{_MODELS}s?\b(?=\s*(?:[,:]|reading))",
            rf"\bits\s+{_MODIFIERS}{_CONFIG}\b",
            # who the assistant is said to be: "you are no longer a search assistant"
            r"\b(?:you\s+are|you['’]re|you\s+were|to\s+be|as)\s+(?:(?:now|no\s+longer|not|still)\s+)*"
            rf"(?:a|an|the)\s+(?:[\w-]+\s+){{0,2}}{_MODELS}\b",
        ],
        "config": [rf"\b{_CONFIG}\b"],
        "prior_config": [
            r"\b(?:previous|prior|earlier|above|preceding|foregoing|initial|original|hidden|secret"
            r"|internal|former|existing|starting|opening)\s+(?:(?:safety|content|system)\s+)?"
            r"(?:instructions|directions|directives|guidelines|guidance|rules|prompts?"
            r"|system\s+prompt|programming|restrictions|policies|constraints|orders|context)\b",
            r"\b(?:instructions|directions|directives|guidelines|guidance|rules|orders|text"
            r"|words|messages?)\s+(?:above|so\s+far|before\s+(?:this|my))\b",
            # the whole of it: "all rules", "any safety filters"
            rf"\b(?:all|any|every)\s+(?:of\s+)?(?:the\s+)?{_CONFIG}\b",
        ],
        "own_config": [
            rf"\b(?:your|the\s+(?:assistant|model|AI|bot)['’]s)\s+{_MODIFIERS}{_CONFIG}\b",
            # a relative clause: "the guidance you got", "everything you were told"
            r"\b(?:instructions?|directions|directives|guidelines|guidance|rules|prompts?|orders"
            r"|text|words|messages?|content|everything|anything|all|what)\s+(?:that\s+)?"
            r"(?:you|you['’]ve)\s+(?:were\s+|have\s+been\s+|had\s+been\s+|was\s+|been\s+)?"
            r"(?:given|told|received|got|gotten|fed|provided|instructed|programmed|trained"
            r"|initiali[sz]ed|loaded|shown|sent|configured)\b",
            # the hidden preamble: "the text that came before this conversation"
            r"\b(?:text|words|message|messages|content|sentence|lines?|prompt)\s+(?:that\s+)?"
            r"(?:came\s+|comes\s+|appears?\s+|was\s+|is\s+)?(?:before|above|preceding|prior\s+to"
            r"|at\s+the\s+(?:start|beginning)\s+of)\s+(?:this|our|the|my)\s+(?:conversation|chat"
            r"|session|message|question|query)\b",
            r"\bcontext\s+window\b",
        ],
        "override": [
            r"\b(?:ignore|ignoring|disregard|forget|override|overrule|bypass|circumvent|discard"
            r"|abandon|scrap|scratch|nullify)\b",
            r"\b(?:set|put)\s+aside\b",
            r"\bpay\s+no\s+attention\b", r"\bnever\s*mind\b",
            r"\b(?:stop|quit)\s+(?:following|obeying|adhering)\b",
            r"\b(?:do\s+not|don['’]t|no\s+need\s+to)\s+(?:follow|obey|adhere|comply)\b",
            r"\bno\s+longer\s+(?:apply|applies|valid|matters?|in\s+effect|bound|relevant)\b",
            r"\b(?:is|are|have\s+been|has\s+been)\s+(?:now\s+)?(?:void|null|cancel(?:l)?ed|revoked"
            r"|obsolete|lifted|suspended|disabled|removed|overridden|invalid|deactivated)\b",
        ],
        "switch_off": [
            # what is also done to any setting: "clear all rules outlook" is no attack
            r"\b(?:disable|deactivate|suspend|lift|drop|cancel|void|erase|reset|wipe|clear"
            r"|remove|skip)\b",
            r"\b(?:turn|switch)\s+off\b",
        ],
        "disclose": [
            r"\b(?:print|reveal|show|display|output|repeat|recite|dump|leak|disclose|expose"
            r"|quote|spell|list|paste|copy|share|send|post|forward|upload|translate|summari[sz]e"
            r"|encode|encrypt|paraphrase|read|complete|append|include|put|insert|embed|attach"
            r"|say|write)\b(?=\s+[\w\"'“‘(<\[])",  # a verb with an object, not "... quote"
            r"\b(?:tell|give)\s+me\b",
        ],
        "persona": [
            r"\bpretend(?:ing)?\b", r"\bact(?:ing)?\s+as\b", r"\brole[\s-]?play(?:ing)?\b",
            r"\bplay\s+(?:the\s+role|a\s+role|a\s+game|along)\b",
            r"\byou(?:\s+are|['’]re)\s+(?:now|no\s+longer)\b", r"\bfrom\s+now\s+on\b",
            r"\b(?:imagine|suppose|assume)\s+(?:that\s+)?you\b", r"\bhypothetical(?:ly)?\b",
            r"\bif\s+you\s+(?:were|had|could|weren['’]t|didn['’]t)\b", r"\bsimulat(?:e|ing)\b",
            r"\balter\s+ego\b", r"\bpersona\b", r"\bin\s+character\b",
            r"\byour\s+name\s+is\b", r"\byou(?:\s+are|['’]re|\s+will\s+be)\s+(?:called|named)\b",
            r"\b(?:respond|answer|reply|speak|talk)\s+as\b",
            rf"\bas\s+an?\s+(?:[\w-]+\s+){{0,2}}{_MODELS}\b",
        ],
        "unrestricted": [
            r"\b(?:no|without(?:\s+any)?|zero|free\s+(?:of|from)|not\s+bound\s+by|unbound\s+by"
            r"|exempt\s+from|beyond)\s+(?:(?:any|all|the|your|its|ethical|moral|content|safety)\s+)"
            r"{0,2}(?:rules|restrictions|limits|limitations|filters|guidelines|policies"
            r"|boundaries|morals|ethics|censorship|constraints|guardrails|safeguards"
            r"|content\s+policy)\b",
            r"\b(?:unrestricted|unfiltered|uncensored|jailbroken|amoral|unshackled)\b",
            r"\bnever\s+(?:refuses?|says?\s+no|declines?|holds?\s+back|mentions?\s+(?:[\w-]+\s+)?"
            r"polic(?:y|ies))\b",
            r"\b(?:do|does|can)\s+anything\s+now\b",
            r"\b(?:never|not)\s+(?:been\s+)?given\s+any\s+(?:rules|restrictions|guidelines)\b",
            r"\brestricted\s+(?:information|content|topics)\b",
        ],
        "exfil_target": [
            r"\bhttps?://\S+", r"!\[[^\]]*\]\(", r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b",
            r"\b(?:the|a|this|that)\s+(?:URL|link|query\s+string|query\s+parameter|parameter"
            r"|webhook|endpoint)\b",
            r"\b(?:chat|conversation|message)\s+(?:history|log|logs|transcript)\b",
            r"\buser['’]s\s+(?:data|messages?|email|history|conversation|details|password)\b",
        ],
        "authority": [
            r"\b(?:I\s+am|I['’]m|this\s+is|we\s+are|we['’]re)\s+(?:your|the)\s+(?:[\w-]+\s+)?"
            r"(?:developers?|creators?|admin(?:istrator)?s?|owners?|operators?|makers?"
            r"|programmers?|engineers?|trainers?|supervisors?)\b",
            r"\bauthori[sz]ation\s+(?:code|key|token)\b",
            r"\b(?:admin|administrator|developer|dev|system|root|sudo|operator)\s+(?:override"
            r"|command|note|notice|message|directive|alert)s?\b",
            r"\bmessage\s+from\s+(?:the\s+)?(?:[\w-]+\s+){0,2}(?:team|staff|developers?|admins?"
            r"|administrators?|creators?)\b",
            r"\[(?:admin|system|developer|dev|root|sudo|operator)\]",
        ],
        "permission": [
            r"\byou\s+(?:may|can|are\s+(?:now\s+)?(?:allowed|permitted|authori[sz]ed|free))\s+"
            r"(?:now\s+)?(?:to\s+)?(?:share|say|answer|reveal|ignore|discuss|tell|output|do"
            r"|speak|generate|write|bypass|provide|give)\b",
            r"\b(?:override|access|permission|clearance)\s+(?:is\s+)?(?:granted|approved"
            r"|confirmed)\b",
        ],
        "output_control": [
            r"\b(?:respond|reply|answer)\s+(?:only\s+)?(?:with|in|using)\b",
            r"\b(?:to|at\s+the\s+end\s+of|end)\s+(?:every|each|all|your)\s+(?:answers?|responses?"
            r"|replies|reply|messages?|outputs?)\b",
            r"\bin\s+(?:every|each|all)\s+(?:answers?|responses?|replies)\b",
            r"\btell\s+the\s+user\b", r"\bthe\s+user\s+(?:that|should|must)\b",
            r"\b(?:always|only)\s+(?:recommend|mention|say|respond|answer|reply|output|promote)\b",
            r"\bin\s+all\s+caps\b",
            r"\bwhen\s+you\s+(?:summari[sz]e|answer|respond|reply|present)\b",
            r"\bbefore\s+(?:answering|responding|replying|you\s+answer|you\s+respond)\b",
        ],
        "context": [
            r"\b(?:this|our|the\s+current)\s+(?:conversation|chat|session|thread)\b",
            r"\bmy\s+(?:message|question|request)\b",
            r"\byour\s+(?:answers?|responses?|reply|replies|output)\b",
            r"\bsearch\s+results\b", r"\b(?:above|before)\s+this\s+(?:line|message|sentence)\b",
        ],
        "framing": [
            r"\bhow\s+(?:to|do|does|did|can|could|should|would|is|are)\b",
            r"\bwhat\s+(?:is|are|does|do|did|happens|was|were)\b",
            r"\bwhy\s+(?:do|does|did|is|are|would|was)\b",
            r"\bis\s+it\s+(?:safe|ok|okay|possible|legal)\b",
            r"\bwhere\s+(?:to|do|does|can|is|are)\b", r"\bwhen\s+(?:to|do|should)\b",
            r"\bwho\s+(?:is|are|was)\b",
        ],
        "topic": [
            r"\bprompt[\s-]*injections?\b", r"\bmemes?\b", r"\bmean(?:s|ing|t)?\b",
            r"\bdefinition\b", r"\bexplain(?:ed|er)\b", r"\borigin\b", r"\bexamples?\b",
            r"\battacks?\b", r"\bdefen[cs]es?\b", r"\bdetect\w*", r"\bmitigat\w+",
            r"\bprevent\w*", r"\bprotect\w*", r"\bresist\w*", r"\bowasp\b", r"\bred[\s-]team\w*",
            r"\bresearch\w*", r"\bpapers?\b", r"\bstud(?:y|ies)\b", r"\bsurvey\b",
            r"\bdatasets?\b", r"\bbenchmarks?\b", r"\btwitter\b", r"\btweets?\b", r"\breddit\b",
            r"\bnews\b", r"\bsecurity\b", r"\btutorial\b", r"\bguide\b", r"\bcourse\b",
            r"\bbest\s+practices\b", r"\btips\b", r"\bchecklist\b", r"\bvs\.?\b", r"\bversus\b",
            r"\bdifference\b", r"\blyrics\b", r"\bsong\b", r"\bmovie\b", r"\bfilm\b",
            r"\bbook\b", r"\binterview\b", r"\bcostume\b", r"\brecipe\b", r"\bchords\b",
            r"\bquote\s+(?:from|star|movie|meaning)\b", r"\btemplate\b", r"\bsyntax\b",
            r"\bjob\s+description\b", r"\bideas\b", r"\bfor\s+kids\b", r"\bpractice\b",
            r"\bcreative\s+writing\b", r"\bpsychology\b", r"\bgrammar\b",
        ],
        "third_party": [
            # a vocative ("hey ChatGPT,") speaks to the assistant; any other mention names
            # someone else's model
            rf"(?<!hey\s)(?<!hi\s)(?<!hello\s)(?<!dear\s)\b{_NAMED_MODELS}\b(?!\s*[,:!])",
            r"\b(?:make|makes|making|get|gets|getting|let|lets|force|forcing|trick|tricking"
            r"|stop|prevent|prevents|preventing)\s+(?:the\s+|an?\s+|my\s+)?(?:[\w-]+\s+)?"
            r"(?:model|AI|LLM|chatbot|assistant|agent|bot|GPT)s?\b",
            r"\b(?:LLMs|large\s+language\s+models|language\s+models|chatbots|AI\s+agents)\b",
        ],
    },
    "zh": {
        "address": [
            r"[你您]",
            # 请 opening a clause asks someone to act
            r"(?:^|[，。！？；：,.!?;:\s])请",
            r"(?:AI|助手|模型|机器人|ChatGPT|GPT)\s*[，,：:！!]",
        ],
        "agent": [
            r"(?:AI|助手|模型|机器人|智能体)(?:请注意|注意|听着|请听好)",
            r"(?:读到|看到|处理)这(?:段|条|些)(?:话|文字|消息|内容)的(?:AI|模型|助手|智能体)",
        ],
        "config": [_ZH_CONFIG],
        "prior_config": [
            rf"(?:以上|上面|上述|之前|前面|先前|此前|最初|初始|原始|原来|原有|隐藏|内部|系统)的?"
            rf"(?:那些|这些|所有|全部|一切)?的?(?:{_ZH_CONFIG}|要求|内容|文字|消息|对话)",
        ],
        "own_config": [
            rf"[你您]的?(?:所有|全部|完整|一切|最初|初始|原始|隐藏|内部|系统|安全)?的?{_ZH_CONFIG}",
            # a relative clause: "你收到的第一条消息", "你被设定的规则"
            rf"[你您][^，。！？,.!?]{{0,12}}?(?:收到|看到|接收|得到|被告知|被设定|被赋予|被给予)"
            rf"的[^，。！？,.!?]{{0,6}}?(?:内容|文字|消息|话|{_ZH_CONFIG})",
            r"(?:这次|本次|这段)?对话(?:开始)?(?:前|之前)(?:的|收到的|看到的)",
        ],
        "override": [
            r"忽略|无视|忽视|漠视|不要理会|不用理会|别理|别管|不用管|不要管|忘记|忘掉|抛开|绕过"
            r"|不算|作废|推翻|放弃",
            r"(?:停止|不再|不必|不用|无需)(?:遵守|遵循|服从|执行)",
            r"当作?没(?:看见|看到|听到)",
        ],
        "switch_off": [r"跳过|失效|无效|取消|关闭|解除|停用|暂停|覆盖|清除|重置"],
        "disclose": [
            r"输出|打印|显示|展示|透露|泄露|泄漏|告诉我|复述|重复|说出|念|读出|写出|列出|翻译"
            r"|总结|概括|编码|拼接|附加|发到|发给|发送|公开|给出|返回|贴出|背诵|抄写",
        ],
        "persona": [
            r"扮演|假装|假设你|想象你|如果你(?:是|没有|不受)|现在你是|你现在是|你现在的身份"
            r"|从现在(?:开始|起)|从今(?:天|以后)起|你叫|人格|角色扮演|模拟|充当|化身|你的身份",
        ],
        "unrestricted": [
            r"(?:没有|不受|无|摆脱|超越)(?:任何)?的?(?:限制|约束|规则|审查|过滤|道德|底线|束缚)",
            r"(?:从不|不会|永不|绝不)拒绝", r"为所欲为", r"无审查|未经审查|去除审查|越狱版",
        ],
        "exfil_target": [
            r"https?://\S+", r"[\w.+-]+@[\w-]+\.[\w.-]+", r"链接|网址|URL|邮箱|聊天记录|对话记录",
        ],
        "authority": [
            r"我是(?:你|您)的(?:开发者|创造者|创建者|管理员|主人|作者|训练者)",
            r"授权码|最高权限",
            # a label, not the phone's "系统通知"
            r"[【\[](?:管理员|系统|开发者|官方|后台)(?:通知|消息|公告|指令|命令)[】\]]",
            r"(?:管理员|开发者)(?:通知|公告|指令|命令)|(?:系统|官方|后台)(?:公告|指令|命令)\s*[：:]",
        ],
        "permission": [
            r"(?:允许|授权|准许)(?:你|您)",
            r"(?:限制|规则|审查|过滤|安全\S{0,2})(?:已经?|现已|均已|都已)(?:被)?"
            r"(?:暂停|解除|关闭|取消|失效|禁用|移除|撤销)",
        ],
        "output_control": [
            r"只(?:能)?(?:回复|回答|输出|说)", r"每(?:个|次|条)(?:回答|回复|答案)",
            r"(?:告诉|通知)用户", r"对用户说", r"(?:回答|回复)(?:之前|前)",
            r"(?:总结|整理|展示)搜索结果时",
        ],
        "context": [
            r"(?:这次|本次|这个|这段)(?:对话|会话|聊天)", r"(?:你|您)的(?:回答|回复|答案)",
            r"搜索结果",
        ],
        "framing": [r"如何|怎么|怎样|什么是|为什么|哪里|在哪"],
        "topic": [
            r"提示词?注入|注入攻击|是什么|什么意思|意思|含义|梗|出处|例子|案例|示例|原理|论文|研究"
            r"|攻击|防御|防范|防止|检测|区别|教程|攻略|歌词|歌曲|电影|电视剧|台词|小品|综艺|作文"
            r"|(?:英文|英语)(?:怎么说|怎么写|翻译)|用英语|做法|菜谱|技巧|命令|在线工具|下载|手册",
        ],
        "third_party": [
            rf"{_NAMED_MODELS}(?!\s*[，,：:！!])",
            r"(?:让|使|要求|诱导|欺骗|强迫|防止)[^。！？，,]{0,6}?(?:模型|AI|大模型|语言模型|助手"
            r"|机器人|智能体)",
        ],
    },
}

# fmt: on
