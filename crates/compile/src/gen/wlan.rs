//! 802.11 and pflog headers: frame-control tests, 802.11 addresses by frame type and
//! distribution-system bits, `type`/`subtype`/`dir`, and pflog's fields (gencode's
//! `gen_wlanhostop`, `gen_p80211_*`, `gen_pf_*`).

use super::*;

impl<T: Target> Gen<'_, T> {
    /// `link[off] & bit` as a branch on the link header (gencode's hand-built `jset` blocks).
    pub(super) fn lh_set(&mut self, off: u32, bit: u32) -> R<T::Pred> {
        self.cmp(Base::LinkHdr, off, Size::B, Cmp::Set, bit, u32::MAX)
    }

    /// `!(link[off] & bit)`: the negation of [`Gen::lh_set`].
    pub(super) fn lh_clear(&mut self, off: u32, bit: u32) -> R<T::Pred> {
        self.cmp(Base::LinkHdr, off, Size::B, Cmp::Clear, bit, u32::MAX)
    }

    /// gencode's `gen_wlanhostop` parts shared by source, destination and multicast: for
    /// data frames `data_tods` (To DS set) or `data_notods`; for management frames `mgmt`;
    /// never for control frames. Each test is built by `f` at the given offset.
    pub(super) fn wlan_by_frame(
        &mut self,
        f: &mut dyn FnMut(&mut Self, u32) -> R<T::Pred>,
        src: bool,
    ) -> R<T::Pred> {
        let b0 = if src {
            // From DS set: SA at 24 with To DS, at 16 without; From DS clear: at 10.
            let b1 = self.lh_set(1, 0x01)?;
            let b0 = f(self, 24)?;
            let b0 = self.and(b1, b0);
            let b2 = self.lh_clear(1, 0x01)?;
            let b1 = f(self, 16)?;
            let b1 = self.and(b2, b1);
            let b0 = self.or(b1, b0);
            let b1 = self.lh_set(1, 0x02)?;
            let b0 = self.and(b1, b0);
            let b2 = self.lh_clear(1, 0x02)?;
            let b1 = f(self, 10)?;
            let b1 = self.and(b2, b1);
            self.or(b1, b0)
        } else {
            // DA at 16 with To DS, at 4 without.
            let b1 = self.lh_set(1, 0x01)?;
            let b0 = f(self, 16)?;
            let b0 = self.and(b1, b0);
            let b2 = self.lh_clear(1, 0x01)?;
            let b1 = f(self, 4)?;
            let b1 = self.and(b2, b1);
            self.or(b1, b0)
        };
        // Data frames.
        let b1 = self.lh_set(0, 0x08)?;
        let b0 = self.and(b1, b0);
        // Management frames: SA at 10, DA at 4.
        let b2 = self.lh_clear(0, 0x08)?;
        let b1 = f(self, if src { 10 } else { 4 })?;
        let b1 = self.and(b2, b1);
        let b0 = self.or(b1, b0);
        // Not control frames (nor the reserved type).
        let b1 = self.lh_clear(0, 0x04)?;
        Ok(self.and(b1, b0))
    }

    /// Neither a CTS nor an ACK control frame (which have no second address).
    pub(super) fn wlan_not_cts_ack(&mut self) -> R<T::Pred> {
        let b0 = self.cmp(Base::LinkHdr, 0, Size::B, Cmp::Ne, 0x04, 0x0c)?;
        let b1 = self.cmp(Base::LinkHdr, 0, Size::B, Cmp::Ne, 0xc0, 0xf0)?;
        let b2 = self.cmp(Base::LinkHdr, 0, Size::B, Cmp::Ne, 0xd0, 0xf0)?;
        let b2 = self.and(b1, b2);
        Ok(self.or(b0, b2))
    }

    /// gencode's `gen_wlanhostop`: an 802.11 address in the direction `dir`.
    pub(super) fn wlanhostop(&mut self, mac: [u8; 6], dir: Dir) -> R<T::Pred> {
        let mut bcmp = |g: &mut Self, off: u32| g.bcmp(Base::LinkHdr, off, &mac);
        Ok(match dir {
            Dir::Src => self.wlan_by_frame(&mut bcmp, true)?,
            Dir::Dst => self.wlan_by_frame(&mut bcmp, false)?,
            Dir::SrcAndDst | Dir::SrcOrDst => {
                let b0 = self.wlanhostop(mac, Dir::Src)?;
                let b1 = self.wlanhostop(mac, Dir::Dst)?;
                if dir == Dir::SrcAndDst { self.and(b0, b1) } else { self.or(b0, b1) }
            }
            Dir::Addr1 => self.bcmp(Base::LinkHdr, 4, &mac)?,
            Dir::Addr2 => {
                let b2 = self.wlan_not_cts_ack()?;
                let b1 = self.bcmp(Base::LinkHdr, 10, &mac)?;
                self.and(b2, b1)
            }
            Dir::Addr3 => {
                let b0 = self.cmp(Base::LinkHdr, 0, Size::B, Cmp::Ne, 0x04, 0x0c)?;
                let b1 = self.bcmp(Base::LinkHdr, 16, &mac)?;
                self.and(b0, b1)
            }
            Dir::Addr4 => {
                let b0 = self.cmp(Base::LinkHdr, 1, Size::B, Cmp::Eq, 0x03, 0x03)?;
                let b1 = self.bcmp(Base::LinkHdr, 24, &mac)?;
                self.and(b0, b1)
            }
            Dir::Ra => {
                let b1 = self.lh_set(0, 0x08)?;
                let b0 = self.bcmp(Base::LinkHdr, 4, &mac)?;
                self.and(b1, b0)
            }
            Dir::Ta => {
                let b2 = self.wlan_not_cts_ack()?;
                let b1 = self.lh_set(0, 0x08)?;
                let b2 = self.and(b1, b2);
                let b1 = self.bcmp(Base::LinkHdr, 10, &mac)?;
                self.and(b2, b1)
            }
        })
    }

    /// gencode's `gen_p80211_type`/`gen_p80211_fcdir`: masked frame-control bits.
    pub(super) fn wlan_fc(
        &mut self,
        off: u32,
        v: u32,
        mask: u32,
        what: &'static str,
    ) -> R<T::Pred> {
        if self.link.kind != link::Kind::Wlan {
            return Err(CompileError::new(
                K::NotOnLinkType { what: LinkFeature::Wlan(what), link: self.link.link_type },
                None,
            ));
        }
        self.cmp(Base::LinkHdr, off, Size::B, Cmp::Eq, v, mask)
    }

    /// A pflog header field (gencode's `gen_pf_rnr`, `gen_pf_reason`…).
    pub(super) fn pf_field(
        &mut self,
        off: u32,
        size: Size,
        v: u32,
        what: &'static str,
    ) -> R<T::Pred> {
        if self.link.kind != link::Kind::Pflog {
            return Err(CompileError::new(
                K::NotOnLinkType { what: LinkFeature::Pflog(what), link: self.link.link_type },
                None,
            ));
        }
        self.eq(Base::LinkHdr, off, size, v)
    }

    /// A pflog name field of 16 bytes, compared over the name's length (gencode's
    /// `gen_pf_ifname`, `gen_pf_ruleset`).
    pub(super) fn pf_name(
        &mut self,
        name: &str,
        off: u32,
        what: &'static str,
        noun: &'static str,
    ) -> R<T::Pred> {
        if self.link.kind != link::Kind::Pflog {
            return Err(CompileError::new(
                K::NotOnLinkType { what: LinkFeature::Pflog(what), link: self.link.link_type },
                None,
            ));
        }
        if name.len() >= 16 {
            return Err(CompileError::new(
                K::OutOfRange {
                    what: Quantity::NameLength { noun },
                    value: name.len() as u64,
                    max: 15,
                },
                None,
            ));
        }
        if name.is_empty() {
            return Ok(self.t.always());
        }
        self.bcmp(Base::LinkHdr, off, name.as_bytes())
    }
}
