//! The demultiplexer of the paper's sections 3.2 and 4: each port has a filter with a priority;
//! a received packet is tried against the filters in order of decreasing priority and goes to
//! the first that accepts it. A filter may ask that packets it accepts be submitted to the
//! following (lower-priority) filters as well, so that several ports get copies (monitors,
//! group communication).
//!
//! Filters of equal priority are tried in the order they were added (the paper leaves that
//! order unspecified and warns that such filters should accept disjoint sets). A filter that
//! continues passes the packet to every filter after it in that order, including later ones of
//! the same priority.

use crate::CspfProgram;

/// One port's filter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    /// Higher priorities are tried first.
    pub priority: u8,
    /// Whether packets this filter accepts are also submitted to lower-priority filters.
    pub continue_lower: bool,
    /// The program.
    pub program: CspfProgram,
}

/// Where one packet went.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Delivery {
    /// Indices (as returned by [`Demux::add`]) of the filters that accepted it, in the order
    /// they were tried.
    pub ports: Vec<usize>,
    /// How many filters were applied.
    pub filters_applied: usize,
    /// Instructions executed over all filters applied.
    pub executed: u64,
}

impl Delivery {
    /// Whether no filter accepted the packet (the paper's `Drop`).
    pub fn dropped(&self) -> bool {
        self.ports.is_empty()
    }
}

/// A set of filters.
#[derive(Clone, Debug, Default)]
pub struct Demux {
    filters: Vec<Filter>,
    /// Indices into `filters` by decreasing priority, then insertion order.
    order: Vec<usize>,
}

impl Demux {
    /// An empty set.
    pub fn new() -> Demux {
        Demux::default()
    }

    /// Adds a filter; returns its port index.
    pub fn add(&mut self, filter: Filter) -> usize {
        let i = self.filters.len();
        self.filters.push(filter);
        self.order = (0..self.filters.len()).collect();
        // A stable sort keeps insertion order among equal priorities.
        self.order.sort_by_key(|&i| std::cmp::Reverse(self.filters[i].priority));
        i
    }

    /// The filter at port `i`.
    pub fn filter(&self, i: usize) -> Option<&Filter> {
        self.filters.get(i)
    }

    /// Applies the filters to `pkt`.
    pub fn deliver(&self, pkt: &[u8]) -> Delivery {
        let mut d = Delivery::default();
        for &i in &self.order {
            let f = &self.filters[i];
            let (accept, executed) = f.program.run(pkt);
            d.filters_applied += 1;
            d.executed += u64::from(executed);
            if accept {
                d.ports.push(i);
                if !f.continue_lower {
                    break;
                }
            }
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Machine, text::assemble};

    fn prog(src: &str) -> CspfProgram {
        CspfProgram::from_words(assemble(src).unwrap(), Machine::default())
    }

    #[test]
    fn highest_priority_wins_unless_it_continues() {
        let ip = prog("pushword+6\npushlit|eq 0x0800");
        let all = prog("");
        let mut d = Demux::new();
        let low = d.add(Filter { priority: 1, continue_lower: false, program: all.clone() });
        let high = d.add(Filter { priority: 10, continue_lower: false, program: ip.clone() });
        let mut pkt = vec![0u8; 20];
        assert_eq!(d.deliver(&pkt).ports, vec![low]);
        pkt[12] = 8;
        let got = d.deliver(&pkt);
        assert_eq!((got.ports, got.filters_applied), (vec![high], 1));
        // A monitor above both that continues sees everything and does not steal it.
        let mon = d.add(Filter { priority: 200, continue_lower: true, program: all });
        assert_eq!(d.deliver(&pkt).ports, vec![mon, high]);
        pkt[12] = 0;
        assert_eq!(d.deliver(&pkt).ports, vec![mon, low]);
        assert!(!d.deliver(&pkt).dropped());
        let mut only = Demux::new();
        only.add(Filter { priority: 0, continue_lower: false, program: ip });
        assert!(only.deliver(&pkt).dropped());
    }

    #[test]
    fn equal_priorities_go_in_insertion_order() {
        let mut d = Demux::new();
        let a = d.add(Filter { priority: 5, continue_lower: false, program: prog("") });
        d.add(Filter { priority: 5, continue_lower: false, program: prog("") });
        assert_eq!(d.deliver(&[]).ports, vec![a]);
    }
}
