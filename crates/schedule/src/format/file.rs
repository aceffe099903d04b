//! A schedule read from a file, in whichever of its formats it is:
//! topocoll's JSON ([`super::from_json_reader`]), MSCCL's XML
//! ([`super::from_msccl_xml`]) or a forest of trees, told apart by name
//! and content.

use super::MscclImport;
use crate::error::fail;
use crate::error::{Error, Result};
use crate::{Collective, Schedule};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// Largest MSCCL XML file read (bytes): it is read whole.
const MAX_XML_BYTES: u64 = 1 << 30;

/// The three formats a schedule file may be in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileFormat {
    /// topocoll's JSON: it fixes the collective, size, element type and
    /// segments.
    Json,
    /// MSCCL's XML: it counts in chunks, whose size, element type and
    /// operator the reader gives.
    Msccl,
    /// A schedule given as its trees (`topocoll-forest/1`, what `optimize`
    /// writes for a synthesised schedule): JSON whose first field names
    /// that format. The layer that knows trees reads it
    /// ([`ScheduleFile::into_reader`]).
    Forest,
}

/// A forest file's format name, as `topocoll_algorithms::forest` writes
/// it (first, but any JSON tool may move it among the short fields before
/// the stages).
const FOREST_FORMAT: &[u8] = br#""topocoll-forest/"#;

/// A schedule file, opened and its format known.
pub struct ScheduleFile {
    path: PathBuf,
    reader: BufReader<std::fs::File>,
    format: FileFormat,
}

impl ScheduleFile {
    /// Opens `path`: MSCCL XML when it is named `.xml` or its first
    /// character past white space is `<`, JSON otherwise.
    pub fn open(path: &Path) -> Result<ScheduleFile> {
        let file = std::fs::File::open(path)
            .map_err(|e| Error::io(format!("cannot read schedule '{}'", path.display()), e))?;
        let mut reader = BufReader::new(file);
        let format = if is_xml(path, &mut reader) {
            FileFormat::Msccl
        } else if is_forest(&mut reader) {
            FileFormat::Forest
        } else {
            FileFormat::Json
        };
        Ok(ScheduleFile {
            path: path.to_path_buf(),
            reader,
            format,
        })
    }

    pub fn format(&self) -> FileFormat {
        self.format
    }

    /// The file's text, for a format this layer does not read
    /// ([`FileFormat::Forest`]).
    pub fn into_reader(self) -> BufReader<std::fs::File> {
        self.reader
    }

    /// The file's whole text (an MSCCL XML file is read whole), up to
    /// 1 GiB.
    pub fn text(self) -> Result<String> {
        let shown = self.path.display();
        let mut text = String::new();
        self.reader
            .take(MAX_XML_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|e| Error::io(format!("cannot read schedule '{shown}' as UTF-8 text"), e))?;
        if text.len() as u64 > MAX_XML_BYTES {
            return Err(fail!(
                Schedule,
                Format,
                "schedule '{shown}' is larger than 1 GiB"
            ));
        }
        Ok(text)
    }

    /// Reads the schedule. An MSCCL file's chunks are sized by `msccl`,
    /// which is given the file's collective (its defaults may depend on
    /// it).
    pub fn read(self, msccl: impl FnOnce(Collective) -> Result<MscclImport>) -> Result<Schedule> {
        match self.format {
            FileFormat::Json => super::from_json_reader(self.reader),
            FileFormat::Forest => Err(fail!(Schedule, Format,
                "schedule '{}' is given as trees (topocoll-forest): expand it with topocoll_algorithms::forest",
                self.path.display()
            )),
            FileFormat::Msccl => {
                let path = self.path.clone();
                let text = self.text()?;
                // The file's name leads the reader's refusals (which name
                // the line and element).
                let named = |e: Error| e.within(format_args!("schedule '{}'", path.display()));
                let collective = super::msccl::collective_of(&text).map_err(named)?;
                super::from_msccl_xml(&text, &msccl(collective)?).map_err(named)
            }
        }
    }
}

/// Whether a schedule file is a forest: its first buffer holds
/// [`FOREST_FORMAT`] (looked at without taking it from the reader).
fn is_forest(file: &mut impl BufRead) -> bool {
    file.fill_buf().is_ok_and(|head| {
        head.windows(FOREST_FORMAT.len())
            .any(|w| w == FOREST_FORMAT)
    })
}

/// Whether a schedule file is MSCCL XML: named `.xml`, or its first
/// character past white space is `<` (looked at without taking it from the
/// reader).
fn is_xml(path: &Path, file: &mut impl BufRead) -> bool {
    if path
        .to_string_lossy()
        .to_ascii_lowercase()
        .ends_with(".xml")
    {
        return true;
    }
    file.fill_buf().is_ok_and(|head| {
        head.iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|&b| b == b'<')
    })
}
