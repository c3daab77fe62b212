//! A runtime whose AMD extension table has a layout capture does not know (major 1 at 432
//! bytes never shipped; major 3 does not exist yet): OnLoad refuses, patches nothing and says
//! why in the status file.

mod common;

use common::*;
use replay::table::AmdLayout;

#[test]
fn an_unknown_table_layout_is_refused_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let status_path = tmp.path().join("status.json");
    set_env(&tmp.path().join("snap"), &status_path, "k", 0, "5");
    let mut t = Tables::new(1, 1, 432, AmdLayout::Current);
    let core = t.core.clone();
    let amd = t.amd.clone();
    assert!(!on_load(&mut t));
    assert_eq!(t.core, core, "core table untouched");
    assert_eq!(t.amd, amd, "AMD table untouched");
    let st = read_status(&status_path);
    assert_eq!(
        st.error.as_deref(),
        Some("unknown AMD extension table version (major 1, 432 bytes); this capture tool knows majors 1 and 2")
    );
}
