//! `sift -d [EXPR]` (`-dd`, `-ddd`): print the program the expression compiles to, and exit,
//! as tcpdump's `-d` does.
//!
//! The program is compiled for what the packets would be: the first file's link type and
//! snapshot length (`-r`, after tcpdump's "reading from file" line), the interface's link
//! type (`-i`, opened to learn it), or `-y` and `-s` (else Ethernet, with tcpdump's warning),
//! optimized unless `-O`. The listing code is `sift_insn::text`'s.

use std::process::ExitCode;

use anyhow::bail;
use sift::filter::Target;
use sift_insn::text;
use sift_pcap::LinkType;

use crate::console::errln;
use crate::dump::DumpArgs;
use crate::live::LiveArgs;

/// Runs `sift -d`.
pub fn run(args: &DumpArgs, live: &LiveArgs) -> anyhow::Result<ExitCode> {
    let expr = crate::dump::expression(args)?.unwrap_or_default();
    let snaplen = live.snaplen.unwrap_or(sift_capture::MAX_SNAPLEN);
    let target = if !args.read.is_empty() {
        if let Some(name) = &args.link_type {
            // Checked, then ignored: the file has its own link type (as tcpdump).
            crate::dump::link_type_arg(name)?;
        }
        let inputs = sift::input::expand(&args.read)?;
        let source = sift::input::Source::open(&inputs)?;
        errln!("{}", source.describe());
        match source.interfaces().first() {
            Some(first) => Target::interface(first),
            None => bail!("{}: no interface before the first packet", inputs[0].display()),
        }
    } else if let Some(interface) = &live.interface {
        sift_capture::check_privileges()?;
        let wanted = args.link_type.as_deref().map(crate::dump::link_type_arg).transpose()?;
        let mut cfg = sift_capture::Config::new(interface);
        cfg.snaplen = snaplen;
        crate::live::choose_link_type(&mut cfg, wanted)?;
        let session = sift::live::Session::open(cfg)?;
        let link_type = session.link_type();
        if let Some(wanted) = wanted
            && wanted != link_type
        {
            bail!("{wanted} is not one of the DLTs supported by this device");
        }
        Target::live(link_type, snaplen)
    } else {
        let link_type = match &args.link_type {
            Some(name) => crate::dump::link_type_arg(name)?,
            None => {
                errln!("Warning: assuming Ethernet");
                LinkType::EN10MB
            }
        };
        Target::file(link_type, snaplen)
    };
    let resolver = sift_filter::SystemResolver::new();
    let program = sift::filter::compile(&expr, &target, !args.no_optimize, &resolver)?;
    let insns = program.insns();
    let out = match args.dump_program {
        1 => text::listing(insns),
        2 => text::c_array(insns),
        _ => text::decimal(insns),
    };
    crate::console::print(out)?;
    Ok(ExitCode::SUCCESS)
}
