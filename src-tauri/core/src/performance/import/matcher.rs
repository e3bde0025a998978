//! Which publications a row fits: by post id (also the one in a post's URL), then by
//! URL, then by title and publishing time.

use super::super::Publication;
use super::post_id_in_url;
use super::rows::ReadRow;
use crate::model::Timestamp;

fn normalized_url(url: &str) -> String {
    url.trim().trim_end_matches('/').replacen("http://", "https://", 1)
}

/// The live publications of one import, indexed once, so that each row is matched in
/// constant time (a lookup by post id, by URL, or a binary search by publishing time)
/// instead of by a scan of every publication: a 10,000-row export against 10,000
/// publications was 10^8 comparisons. The rows fit exactly the publications the rules
/// above name, in the order of `publications`.
pub(super) struct Matcher<'a> {
    publications: &'a [Publication],
    /// A platform post id → publications with that id or with a URL carrying it.
    by_post_id: std::collections::HashMap<String, Vec<usize>>,
    /// A normalised URL → publications with that URL.
    by_url: std::collections::HashMap<String, Vec<usize>>,
    /// Every publication, by publishing time (then position).
    by_time: Vec<usize>,
    by_id: std::collections::HashMap<&'a str, usize>,
}

impl<'a> Matcher<'a> {
    pub(super) fn new(publications: &'a [Publication]) -> Matcher<'a> {
        let mut by_post_id: std::collections::HashMap<String, Vec<usize>> = std::collections::HashMap::new();
        let mut by_url: std::collections::HashMap<String, Vec<usize>> = std::collections::HashMap::new();
        for (i, p) in publications.iter().enumerate() {
            let from_url = p.url.as_deref().and_then(post_id_in_url);
            for id in p.platform_post_id.iter().chain(from_url.iter()) {
                let list = by_post_id.entry(id.clone()).or_default();
                // The same id as post id and in the URL: once.
                if list.last() != Some(&i) {
                    list.push(i);
                }
            }
            if let Some(url) = &p.url {
                by_url.entry(normalized_url(url)).or_default().push(i);
            }
        }
        let mut by_time: Vec<usize> = (0..publications.len()).collect();
        by_time.sort_by_key(|i| (publications[*i].published_at, *i));
        let by_id = publications.iter().enumerate().map(|(i, p)| (p.id.as_str(), i)).rev().collect();
        Matcher { publications, by_post_id, by_url, by_time, by_id }
    }

    /// The publication `id`, when it is one of these.
    pub(super) fn publication(&self, id: &str) -> Option<&'a Publication> {
        self.by_id.get(id).map(|i| &self.publications[*i])
    }

    fn listed(&self, list: Option<&Vec<usize>>) -> Vec<&'a Publication> {
        list.map(|l| l.iter().map(|i| &self.publications[*i]).collect()).unwrap_or_default()
    }

    /// The publications `row` fits, and how.
    pub(super) fn candidates(&self, row: &ReadRow) -> (Vec<&'a Publication>, &'static str) {
        if let Some(id) = &row.post_id {
            let found = self.listed(self.by_post_id.get(id));
            if !found.is_empty() {
                return (found, "postId");
            }
        }
        if let Some(url) = &row.url {
            let found = self.listed(self.by_url.get(&normalized_url(url)));
            if !found.is_empty() {
                return (found, "url");
            }
        }
        let (Some(at), false) = (row.published_at, row.title.is_empty()) else { return (Vec::new(), "") };
        // The publications within a little more than the tolerance, by binary search;
        // the exact tolerance is then checked as the rule says.
        let (from, to) = if row.date_only { (at, at + chrono::Duration::hours(25)) } else { (at - chrono::Duration::minutes(7), at + chrono::Duration::minutes(7)) };
        let start = self.by_time.partition_point(|i| self.publications[*i].published_at < from);
        let end = self.by_time.partition_point(|i| self.publications[*i].published_at <= to);
        let mut found: Vec<usize> = self.by_time[start..end.max(start)].iter().copied().filter(|i| title_and_time_fit(row, &self.publications[*i], at)).collect();
        found.sort_unstable();
        (found.into_iter().map(|i| &self.publications[i]).collect(), "titleAndTime")
    }
}

/// `p` has the row's title (or a title the row's starts with) and was published within
/// the tolerance of `at`.
fn title_and_time_fit(row: &ReadRow, p: &Publication, at: Timestamp) -> bool {
    let title = row.title.trim();
    let titled = p.title.trim() == title || (!p.title.trim().is_empty() && title.starts_with(p.title.trim()));
    titled && if row.date_only { (p.published_at - at).num_hours().abs() < 24 && p.published_at >= at } else { (p.published_at - at).num_minutes().abs() <= 5 }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use chrono::TimeZone;

    use super::super::rows::read_rows;
    use super::super::{profiles, read_table, recognise};
    use super::*;
    use crate::model::Platform;
    use proptest::prelude::*;

    /// The matcher before the index: a scan of every publication per row, kept as the
    /// reference the indexed [`Matcher`] must agree with.
    fn linear_candidates<'a>(row: &ReadRow, publications: &'a [Publication]) -> (Vec<&'a Publication>, &'static str) {
        if let Some(id) = &row.post_id {
            let found: Vec<&Publication> = publications
                .iter()
                .filter(|p| p.platform_post_id.as_deref() == Some(id.as_str()) || p.url.as_deref().and_then(post_id_in_url).as_deref() == Some(id.as_str()))
                .collect();
            if !found.is_empty() {
                return (found, "postId");
            }
        }
        if let Some(url) = &row.url {
            let url = normalized_url(url);
            let found: Vec<&Publication> = publications.iter().filter(|p| p.url.as_deref().map(normalized_url).as_deref() == Some(url.as_str())).collect();
            if !found.is_empty() {
                return (found, "url");
            }
        }
        let (Some(at), false) = (row.published_at, row.title.is_empty()) else { return (Vec::new(), "") };
        let title = row.title.trim();
        let found: Vec<&Publication> = publications
            .iter()
            .filter(|p| p.title.trim() == title || (!p.title.trim().is_empty() && title.starts_with(p.title.trim())))
            .filter(|p| if row.date_only { (p.published_at - at).num_hours().abs() < 24 && p.published_at >= at } else { (p.published_at - at).num_minutes().abs() <= 5 })
            .collect();
        (found, "titleAndTime")
    }

    fn ids(found: &(Vec<&Publication>, &'static str)) -> (Vec<String>, &'static str) {
        (found.0.iter().map(|p| p.id.clone()).collect(), found.1)
    }

    fn base() -> Timestamp {
        chrono::Utc.with_ymd_and_hms(2026, 3, 5, 12, 0, 0).unwrap()
    }

    fn publication(i: usize, post_id: Option<String>, url: Option<String>, title: String, minutes: i64) -> Publication {
        Publication {
            id: format!("pub_{i:04}"),
            project_id: "prj_1".into(),
            platform: Platform::X,
            version_number: 1,
            version_id: "ver_1".into(),
            account_id: None,
            url,
            platform_post_id: post_id,
            title,
            published_at: base() + chrono::Duration::seconds(minutes * 60 + (i as i64 % 7) * 13),
            time_zone: "UTC".into(),
            format: super::super::super::PublicationFormat::Post,
            distribution: super::super::super::Distribution::Organic,
            visibility: super::super::super::Visibility::Public,
            ai_changes: Vec::new(),
            previous_version_number: None,
            removed_at: None,
            created_by: "t".into(),
            created_at: base(),
            updated_at: base(),
        }
    }

    fn row(post_id: Option<String>, url: Option<String>, title: String, at: Option<Timestamp>, date_only: bool) -> ReadRow {
        ReadRow { row: 2, title, post_id, url, published_at: at, date_only, metrics: BTreeMap::new(), extras: BTreeMap::new(), raw: Vec::new(), private: false, problem: None }
    }

    // Few ids, URLs, titles and times, so that rows often fit one, several or no
    // publication, by each rule.
    const TITLES: [&str; 6] = ["春天来了", "春天来了 #春天", " 春天 ", "", "Spring", "Spring is here"];

    fn url_of(n: u8) -> Option<String> {
        match n % 6 {
            0 => None,
            1 => Some(format!("https://x.com/a/status/{}", 100 + n % 3)),
            2 => Some(format!("http://x.com/a/status/{}/", 100 + n % 3)),
            3 => Some(format!("https://www.xiaohongshu.com/explore/{}", n % 2)),
            4 => Some(format!("https://www.xiaohongshu.com/explore/{}/", n % 2)),
            _ => Some("https://example.com/post?id=7".to_owned()),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn the_indexed_matcher_finds_what_the_linear_scan_found(
            pubs in proptest::collection::vec((0u8..8, 0u8..12, 0usize..6, -30i64..1600), 0..40),
            rows in proptest::collection::vec((0u8..8, 0u8..12, 0usize..6, -30i64..1600, any::<bool>(), any::<bool>()), 1..30),
        ) {
            let publications: Vec<Publication> = pubs
                .iter()
                .enumerate()
                .map(|(i, (id, url, title, minutes))| publication(i, (*id < 4).then(|| format!("{}", 100 + id)), url_of(*url), TITLES[*title].to_owned(), *minutes))
                .collect();
            let matcher = Matcher::new(&publications);
            for (id, url, title, minutes, date_only, timed) in rows {
                let at = if date_only { base() + chrono::Duration::days(minutes / 600) } else { base() + chrono::Duration::minutes(minutes) };
                let r = row((id < 5).then(|| format!("{}", 100 + id)), url_of(url), TITLES[title].to_owned(), timed.then_some(at), date_only);
                prop_assert_eq!(ids(&matcher.candidates(&r)), ids(&linear_candidates(&r, &publications)));
            }
        }
    }

    /// The rows of the committed fixtures (tests/fixtures/performance), matched against
    /// publications made from those rows (by post id, by URL, by title and time, two
    /// of each where one should be ambiguous, and none), fit the same publications by
    /// the same rule with the index as with the scan.
    #[test]
    fn on_the_fixture_files_the_indexed_matcher_agrees_with_the_linear_scan() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/performance");
        let all = profiles().unwrap();
        let mut checked = 0;
        for file in ["xiaohongshu-notes.csv", "xiaohongshu-notes.xlsx", "xiaohongshu-notes.xls"] {
            let table = read_table(&std::fs::read(dir.join(file)).unwrap()).unwrap();
            let (profile, header) = recognise(&table, &all, None).unwrap();
            let read = read_rows(profile, &table, header);
            assert!(!read.is_empty(), "{file}");
            let mut publications = Vec::new();
            for (k, r) in read.iter().enumerate() {
                let Some(at) = r.published_at else { continue };
                let minutes = (at - base()).num_minutes();
                // Matched by title and time (one), ambiguous (two), or a near miss.
                let copies = k % 3;
                for c in 0..copies {
                    publications
                        .push(Publication { published_at: at + chrono::Duration::minutes(c as i64 * 2), ..publication(publications.len(), None, None, r.title.clone(), minutes) });
                }
                publications.push(Publication { published_at: at + chrono::Duration::minutes(9), ..publication(publications.len(), None, None, r.title.clone(), minutes) });
                if let Some(id) = &r.post_id {
                    publications.push(publication(publications.len(), Some(id.clone()), None, String::new(), 0));
                }
                if let Some(url) = &r.url {
                    publications.push(publication(publications.len(), None, Some(url.clone()), String::new(), 0));
                }
            }
            let matcher = Matcher::new(&publications);
            for r in &read {
                let (indexed, linear) = (ids(&matcher.candidates(r)), ids(&linear_candidates(r, &publications)));
                assert_eq!(indexed, linear, "{file} row {}", r.row);
                checked += 1;
            }
            // Nothing fits when there is nothing to fit.
            for r in &read {
                assert_eq!(Matcher::new(&[]).candidates(r).0.len(), 0);
            }
        }
        assert!(checked >= 3);
    }
}
