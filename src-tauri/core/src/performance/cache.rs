//! What the dashboard reads on every query, kept in memory until the store changes it:
//! every publication (5,000 of them take longer to decode than the rest of a query) and
//! the point lists of the (platform, key) pairs the medians and the sort read.
//!
//! Each entry is kept under the store's generation of its kind
//! ([`Store::generation`]), taken before it was read: any committed batch that touches
//! the kind bumps the number and the next read loads again, so a cached answer is never
//! older than the store was when the query began. Nothing here is written: a crash
//! loses only the cache.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::metrics::MetricPoint;
use super::Publication;
use crate::error::ApiError;
use crate::model::Platform;
use crate::store::{Kind, Store};

/// Point lists kept at most; past it the cache starts again (five platforms × a few keys
/// is the dashboard's usual working set).
const MAX_POINT_LISTS: usize = 32;

type PointLists = HashMap<(Platform, String), Arc<Vec<MetricPoint>>>;

/// The engine's performance read cache (see the module's docs).
#[derive(Debug, Default)]
pub struct Cache {
    publications: Mutex<Option<(u64, Arc<Vec<Publication>>)>>,
    points: Mutex<(u64, PointLists)>,
}

impl Cache {
    /// Every publication (removed ones too), in creation order, as
    /// [`super::all_publications`] reads them.
    pub fn publications(&self, store: &Store) -> Result<Arc<Vec<Publication>>, ApiError> {
        let generation = store.generation(Kind::Publications);
        if let Some((at, list)) = self.publications.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            if *at == generation {
                return Ok(Arc::clone(list));
            }
        }
        let list = Arc::new(super::all_publications(store)?);
        let mut slot = self.publications.lock().unwrap_or_else(|p| p.into_inner());
        if slot.as_ref().is_none_or(|(at, _)| *at <= generation) {
            *slot = Some((generation, Arc::clone(&list)));
        }
        Ok(list)
    }

    /// The points of `metric` on `platform` if they are cached and current.
    pub fn cached_points(&self, store: &Store, platform: Platform, metric: &str) -> Option<Arc<Vec<MetricPoint>>> {
        let generation = store.generation(Kind::MetricPoints);
        let points = self.points.lock().unwrap_or_else(|p| p.into_inner());
        (points.0 == generation).then(|| points.1.get(&(platform, metric.to_owned())).cloned()).flatten()
    }

    /// Every point of `metric` on `platform` (one scan, kept until the points change).
    pub fn points(&self, store: &Store, platform: Platform, metric: &str) -> Result<Arc<Vec<MetricPoint>>, ApiError> {
        if let Some(list) = self.cached_points(store, platform, metric) {
            return Ok(list);
        }
        let generation = store.generation(Kind::MetricPoints);
        let list = Arc::new(store.scan::<MetricPoint>(&MetricPoint::prefix(platform, metric))?);
        let mut points = self.points.lock().unwrap_or_else(|p| p.into_inner());
        if points.0 != generation || points.1.len() >= MAX_POINT_LISTS {
            if points.0 > generation {
                // A newer reader already keeps newer lists; this one is not kept.
                return Ok(list);
            }
            *points = (generation, HashMap::new());
        }
        points.1.insert((platform, metric.to_owned()), Arc::clone(&list));
        Ok(list)
    }
}
