// The sample project a first run can start from: one in Chinese, one in English, chosen
// by the UI language. It is an ordinary project (archived like any other, Ctrl+K → archive); its title
// begins with the sample mark, and its first lines say what it is for.

import type { Lang } from "../shared/i18n";
import type { Platform, ProjectCreateParams } from "../shared/api/generated";

/** The mark a sample project's title begins with, in each language. */
export const SAMPLE_MARK: Record<Lang, string> = { zh: "示例 · ", en: "Sample · " };

const PLATFORMS: Platform[] = ["wechat", "zhihu", "x", "xiaohongshu"];

const ZH = `> 这是一个**示例项目**，用来试一试 Inkstone：改几句，按 Ctrl+S 存一个版本，打开“草稿”看各平台的样子。用完后按 Ctrl+K，选“归档或取消归档此项目”把它收起来，你的其他项目不受影响。

# 春天，去河边走一走

冬天太长的时候，人会忘了自己有多喜欢走路。

三月的第一个周末，我把手机留在家里，沿着河边走了一个小时。柳树刚冒出嫩芽，远看像一层淡绿色的雾；有人在岸边钓鱼，一整个上午也没见他提竿。

## 走路时想明白的三件事

1. **慢一点也没关系。** 赶路的时候看不见的东西，慢下来就都在那里。
2. **不必每件事都记录。** 没拍照的那一段路，反而记得最清楚。
3. **身体比脑子先知道答案。** 走到第四十分钟，卡了一周的那段文章忽然就顺了。

如果这个周末有空，不妨也出门走走。你最近一次不带目的地散步，是什么时候？
`;

const EN = `> This is a **sample project** for trying Inkstone: change a few lines, press Ctrl+S to keep a version, and open Drafts to see how each platform gets it. When you are done, press Ctrl+K and choose “Archive or restore this project”; your other projects are not touched.

# A walk by the river in spring

When winter runs long, it is easy to forget how much you like walking.

On the first weekend of March I left my phone at home and walked along the river for an hour. The willows had just budded, a pale green haze from a distance; a man fished from the bank all morning without once lifting his rod.

## Three things the walk made clear

1. **Slower is fine.** What you miss while hurrying is all still there when you slow down.
2. **Not everything needs recording.** The stretch I did not photograph is the one I remember best.
3. **The body knows before the mind does.** Forty minutes in, the paragraph I had been stuck on for a week came out right.

If you have a free hour this weekend, take a walk. When did you last walk with nowhere to go?
`;

/** What `project.create` needs for the sample in `lang`. */
export function sampleProject(lang: Lang): ProjectCreateParams {
  return lang === "zh"
    ? { title: `${SAMPLE_MARK.zh}春天，去河边走一走`, source: ZH, platforms: PLATFORMS }
    : { title: `${SAMPLE_MARK.en}A walk by the river in spring`, source: EN, platforms: PLATFORMS };
}

/** Whether a project's title carries the sample mark of either language. */
export function isSample(title: string): boolean {
  return title.startsWith(SAMPLE_MARK.zh) || title.startsWith(SAMPLE_MARK.en);
}
